import Foundation

/// The search index's build and catch-up: reading message files into it (see ``SearchService``).
extension SearchService {
    // MARK: - Building

    func enqueue(_ files: [RecordFile]) {
        for file in files where waiting.insert(file.path).inserted { backlog.append(file) }
        if !waiting.isEmpty { isBuilding = true }
    }

    /// Indexes the next few channels of the backlog, then lets searches run before the next few.
    func scheduleBuild() {
        guard !isBuildScheduled else { return }
        isBuildScheduled = true
        queue.async { [weak self] in self?.buildStep() }
    }

    func buildStep() {
        isBuildScheduled = false
        guard folderIsOurs() else { return abandon() }
        var done = 0
        while done < Self.channelsPerItem, !backlog.isEmpty {
            let file = backlog.removeFirst()
            guard waiting.remove(file.path) != nil else { continue }
            done += 1
            do {
                try reindex(file)
            } catch {
                // A file that cannot be read now is tried again when it next changes; the log says which.
                store.storage.logger.warning(
                    "FlatCache could not index a channel for search", metadata: ["file": "\(file.path)", "error": "\(error)"])
            }
        }
        compactIfWorthIt()
        if backlog.isEmpty || waiting.isEmpty { finishBuild() } else { scheduleBuild() }
    }

    /// Ends the build: saves what it built (once per build), and tells those waiting for it.
    func finishBuild() {
        backlog = []
        waiting = []
        if isBuilding, !changedSinceSnapshot.isEmpty || removedSinceSnapshot { saveSnapshot() }
        isBuilding = false
        let waiters = completionWaiters
        completionWaiters = []
        let finished = progress
        for waiter in waiters { waiter(.success(finished)) }
    }

    // MARK: - Catching up

    /// Indexes what changed since the last search: this process's changes (the ledger), then,
    /// when ``sweepInterval`` has passed since it last looked, other writers' (a `stat` a file).
    func catchUp() throws(FlatCacheError) {
        guard folderIsOurs() else { return abandon() }
        let changed = ledger.take()
        if changed.everything {
            // Emptied, or a new key: nothing indexed holds any more, channel names included.
            (index, indexed, changedSinceSnapshot, removedSinceSnapshot, linesSaid) = (Index(), [:], [], true, [:])
            (backlog, waiting, isBuilding) = ([], [], true)
        }
        var dirty = Set(changed.paths.filter { $0.hasPrefix(store.layout.messagesDirectory + "/") && $0.hasSuffix(".lines") })
        let now = ContinuousClock.now
        if changed.everything || lastSweep.map({ now - $0 >= Self.sweepInterval }) ?? true {
            do {
                try sweep(into: &dirty)
                lastSweep = now
            } catch {
                // Nothing taken is lost: this process's changes wait in the ledger for the next search.
                for path in changed.paths { ledger.record(path) }
                if changed.everything { ledger.recordEverything() }
                throw error
            }
        }
        // A build with little left is finished now: a small cache's first search sees everything.
        if waiting.count <= Self.catchUpLimit {
            for file in backlog where waiting.contains(file.path) { dirty.insert(file.path) }
        }
        var left = dirty.sorted()[...]
        do {
            while let path = left.first {
                waiting.remove(path)
                try reindex(path: path, appended: changed.appended[path])
                left = left.dropFirst()
            }
        } catch {
            // Tried again at the next search.
            for path in left { ledger.record(path) }
            throw error
        }
        if waiting.isEmpty { finishBuild() }
        compactIfWorthIt()
        // A removed channel's words leave the saved index at once; other changes wait for many more.
        if waiting.isEmpty, removedSinceSnapshot || changedSinceSnapshot.count >= max(32, indexed.count / 10) { saveSnapshot() }
    }

    /// Adds to `dirty` the message files other writers changed, added or removed since they were
    /// indexed (by their stamps); more than ``catchUpLimit`` go to the background build instead.
    func sweep(into dirty: inout Set<String>) throws(FlatCacheError) {
        let files = try messageFiles()
        let present = Set(files.map(\.path))
        var others = [RecordFile]()
        for file in files where !dirty.contains(file.path) {
            guard let known = indexed[file.path] else {
                if !waiting.contains(file.path) { others.append(file) }  // else the build has it still to do
                continue
            }
            if try store.engine.folders.dataStamp(of: file) != known.stamp { others.append(file) }
        }
        for path in indexed.keys where !present.contains(path) { dirty.insert(path) }
        if others.count > Self.catchUpLimit {
            // Another process's big write, or a folder of new files: in the background.
            enqueue(others)
            scheduleBuild()
        } else {
            for file in others { dirty.insert(file.path) }
        }
    }

    /// Whether the folder still holds this cache's key and record types, with no key change
    /// under way: once another instance gave it a new key (or other types), this one must read
    /// none of its files (with the old key every file would look damaged, and be moved aside).
    func folderIsOurs() -> Bool {
        let layout = store.layout
        // Looked at every time (one `stat`): a key change rewrites `records` only when it ends.
        guard (try? KeyChange.isUnderWay(layout)) == false else { return false }
        let stamp: FileStamp?
        let contents: RecordTypesFile.Contents?
        do {
            stamp = try FileSystem.stamp(at: layout.recordTypesPath)
            if let checked = folderCheck, checked.stamp == stamp, stamp != nil { return checked.ours }
            contents = try RecordTypesFile.readContents(layout)
        } catch {
            return false  // not known to be ours: read nothing now, and look again next time
        }
        let ours = contents.map { $0.keyID == layout.sealer?.keyID && $0.types == store.storage.recordTypes } ?? true
        folderCheck = (stamp, ours)
        return ours
    }

    /// Forgets everything, as if search had not started: the folder is not this cache's now
    /// (see ``folderIsOurs()``). The next search starts again, if it is this cache's by then.
    func abandon() {
        (index, indexed, backlog, waiting, changedSinceSnapshot, removedSinceSnapshot) = (Index(), [:], [], [], [], false)
        linesSaid = [:]
        (started, lastSweep) = (false, nil)
        finishBuild()
    }

    /// The message files on disk, and those memory holds that may not be written yet.
    func messageFiles() throws(FlatCacheError) -> [RecordFile] {
        var files = try store.layout.messageFiles()
        let onDisk = Set(files.map(\.path))
        let folder = store.layout.messagesDirectory + "/"
        for path in store.engine.heldPaths() where path.hasPrefix(folder) && path.hasSuffix(".lines") && !onDisk.contains(path) {
            files.append(store.layout.messagesFile(named: String(path.dropFirst(folder.count))))
        }
        return files
    }

    /// Brings the index of the message file at `path` in line with it: by the writes that appended
    /// to it since it was indexed (``AppendedWrite``), without reading it, when they account for
    /// every change (``indexAppended(_:to:)``); else as ``reindex(_:)``, reading it.
    func reindex(path: String, appended: [AppendedWrite]?) throws(FlatCacheError) {
        let file = store.layout.messagesFile(named: String(path.split(separator: "/").last ?? ""))
        if let appended, try indexAppended(appended, to: file) { return }
        try reindex(file)
    }

    /// Indexes what `appended` says of `file`, when it says all that changed since the file was
    /// indexed: the writes follow one another from the stamp indexed to the file's stamp now,
    /// and memory holds no change to it not written. `false` (nothing done) otherwise. A new
    /// message, or a change log, then costs the index its own messages, not a read and a diff
    /// of the channel (issue 34).
    func indexAppended(_ appended: [AppendedWrite], to file: RecordFile) throws(FlatCacheError) -> Bool {
        guard let known = indexed[file.path], let from = known.stamp, let channelURL = known.channelURL,
            let last = appended.last, appended[0].before == from,
            zip(appended, appended.dropFirst()).allSatisfy({ $0.after == $1.before }),
            !store.engine.hasUnwrittenChanges(file), try store.engine.folders.dataStamp(of: file) == last.after
        else { return false }
        // For each key, what its last line says (`nil`: deleted), in the order keys first came.
        var final = [Message.MessageID: Message?]()
        var keys = [Message.MessageID]()
        for write in appended {
            for change in write.changes {
                guard let upserts = change.upserts as? [Message] else { return false }
                for message in upserts where final.updateValue(message, forKey: message.messageID) == nil {
                    keys.append(message.messageID)
                }
                for bytes in change.deletions {
                    guard let id = MessageIDBytes.id(bytes, as: Message.MessageID.self) else { return false }
                    if final.updateValue(nil, forKey: id) == nil { keys.append(id) }
                }
            }
        }
        var gone = [Message.MessageID]()
        var changed = [Index.Message]()
        for key in keys {
            let old = index.fingerprint(of: key, in: channelURL)
            guard let message = final[key] ?? nil, let text = message.searchableText, !text.isEmpty else {
                if old != nil { gone.append(key) }
                continue
            }
            let current = Index.Message(key: key, sender: message.senderID ?? "", createdAt: message.createdAt, text: text)
            if old != current.fingerprint { changed.append(current) }
        }
        if !gone.isEmpty { index.remove(gone, from: channelURL) }
        if !changed.isEmpty { index.upsert(changed, in: channelURL) }
        indexed[file.path] = Snapshot.File(channelURL: channelURL, stamp: last.after)
        if last.after != from { changedSinceSnapshot.insert(file.path) }
        keepLinesSaid(final, of: file.path, from: from, to: last)
        return true
    }

    /// Keeps what the lines of writes from `from` to `last` said of the file at `path` (``linesSaid``),
    /// with what earlier lines said of it when the writes went on from there, when a load of the
    /// file shows every record it holds then.
    private func keepLinesSaid(
        _ final: [Message.MessageID: Message?], of path: String, from: FileStamp, to last: AppendedWrite
    ) {
        let earlier = linesSaid.removeValue(forKey: path)
        guard let count = last.recordCount, count <= store.maxPerChannel else { return }
        var messages = earlier?.stamp == from ? earlier!.messages : [:]
        for (key, message) in final { messages[key] = message }  // a deleted one (`nil`) leaves
        guard !messages.isEmpty else { return }
        if linesSaid.values.reduce(messages.count, { $0 + $1.messages.count }) > Self.linesSaidLimit { linesSaid = [:] }
        linesSaid[path] = (last.after, messages)
    }

    /// Brings the index of one message file in line with what a load returns now. A file memory
    /// does not hold is read leaving memory as it was: indexing must not push the app's channels
    /// out, nor bring in what was saved with ``CacheTier/disk``.
    func reindex(_ file: RecordFile) throws(FlatCacheError) {
        linesSaid[file.path] = nil
        let stamp = try store.engine.folders.dataStamp(of: file)
        // Every record of the file, whatever expiry and retention say now (they may say otherwise at
        // the next open, with the file unchanged): hits are checked against what a load returns.
        let records: [Message]
        if stamp == nil && !store.engine.holds(file) {
            records = []
        } else {
            records = try store.engine.recordsLeavingMemory(file, rule: store.appendRule, stamp: stamp) ?? []
            filesRead += 1
        }
        let known = indexed[file.path]
        let channelURL = records.first?.channelURL ?? known?.channelURL
        let (changed, old) = changes(in: records, channelURL: channelURL)
        if let channelURL {
            if !old.isEmpty { index.remove(old.keys, from: channelURL) }
            if !changed.isEmpty { index.upsert(changed, in: channelURL) }
        }
        // Memory's changes not written yet: the file's stamp does not say what was indexed.
        let indexedStamp = store.engine.hasUnwrittenChanges(file) ? nil : stamp
        let now = records.isEmpty && stamp == nil
            ? nil : Snapshot.File(channelURL: channelURL, stamp: indexedStamp)
        if !old.isEmpty || !changed.isEmpty || (known == nil) != (now == nil) || known?.stamp != now?.stamp {
            changedSinceSnapshot.insert(file.path)
        }
        if known != nil, now == nil { removedSinceSnapshot = true }
        indexed[file.path] = now
    }

    /// The messages of `records` (all of one file) that the index does not hold as they are now,
    /// and the fingerprints of the documents it holds of `channelURL` that no record has any more.
    /// Specialized for ``ChatMessage``: a change to a channel runs it over all the channel's records.
    @_specialize(where Message == ChatMessage)
    func changes(
        in records: [Message], channelURL: String?
    ) -> (changed: [Index.Message], gone: [Message.MessageID: UInt64]) {
        // What the index holds of the channel now; what is left of it once the records are through is gone.
        var old = channelURL.map { index.fingerprints(in: $0) } ?? [:]
        var changed = [Index.Message]()
        // Each record read in place: in generic code an iterator copies each one, strings and all.
        records.withUnsafeBufferPointer { records in
            for position in records.indices {
                guard let text = records[position].searchableText, !text.isEmpty else { continue }
                let key = records[position].messageID
                let current = Index.Message(
                    key: key, sender: records[position].senderID ?? "", createdAt: records[position].createdAt, text: text)
                if old.removeValue(forKey: key) != current.fingerprint { changed.append(current) }
            }
        }
        return (changed, old)
    }

    /// Drops the documents upserts and removals left dead once they are a quarter of the index.
    func compactIfWorthIt() {
        if index.deadCount > 4096, index.deadCount * 4 > index.documents.count { index.compact() }
    }
}
