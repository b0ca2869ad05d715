import Foundation

/// Moves a cache folder from one key to another, or between plain and
/// encrypted, so that a crash at any point leaves every file readable with
/// the old key or the new one, and the next open finishes the change.
///
/// The change is announced first, in the `rekey` file at the root (written
/// atomically): the two key ids (`plain` for none), and when both are keys,
/// each key sealed under the other, so that an open with either can read
/// the files still under the other. Then each data file is rewritten under
/// the new key (a message file under its new name, written before the old
/// one goes), the `records` file names the new key, and `rekey` goes.
///
/// An open that finds `rekey` finishes the change toward the key it was
/// given: with the new key it goes on; with the old one it goes back. Every
/// step looks at what each file is now, so running it again is harmless.
enum KeyChange {
    /// What the `rekey` file says.
    struct State: Equatable {
        /// The key id the folder is leaving; `nil` for plain.
        var from: String?
        /// The key id it is going to; `nil` for plain.
        var to: String?
        /// The `from` key sealed under the `to` key, when both are keys.
        var fromKey: Data?
        /// The `to` key sealed under the `from` key, when both are keys.
        var toKey: Data?
    }

    /// The file name sealed keys in `rekey` are bound to (their associated data's name).
    static let fileName = "rekey"

    /// Whether a change is under way in the folder: its `rekey` file exists.
    static func isUnderWay(_ layout: CacheLayout) throws(FlatCacheError) -> Bool {
        try FileSystem.entry(at: layout.keyChangePath) != .missing
    }

    /// The `rekey` file's bytes: `from <id|plain>\n`, `to <id|plain>\n`, and
    /// when both are keys `from-key <Base64>\n` and `to-key <Base64>\n`.
    static func contents(_ state: State) -> Data {
        var text = "from \(state.from ?? "plain")\nto \(state.to ?? "plain")\n"
        if let fromKey = state.fromKey, let toKey = state.toKey {
            text += "from-key \(fromKey.base64EncodedString())\nto-key \(toKey.base64EncodedString())\n"
        }
        return Data(text.utf8)
    }

    /// The state in `data`; `nil` unless it is in the file's form.
    static func parse(_ data: Data) -> State? {
        guard let text = String(data: data, encoding: .utf8), text.hasSuffix("\n") else { return nil }
        let lines = text.dropLast().split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard lines.count == 2 || lines.count == 4, lines[0].hasPrefix("from "), lines[1].hasPrefix("to ") else { return nil }
        let id = { (value: String) -> String? in value == "plain" ? nil : value }
        var state = State(from: id(String(lines[0].dropFirst(5))), to: id(String(lines[1].dropFirst(3))))
        if lines.count == 4 {
            guard lines[2].hasPrefix("from-key "), lines[3].hasPrefix("to-key "),
                let fromKey = Data(base64Encoded: String(lines[2].dropFirst(9))),
                let toKey = Data(base64Encoded: String(lines[3].dropFirst(7)))
            else { return nil }
            (state.fromKey, state.toKey) = (fromKey, toKey)
        }
        guard (state.fromKey != nil) == (state.from != nil && state.to != nil) else { return nil }
        return state
    }

    /// Changes the folder of `source` (under its sealer) to `target`'s sealer,
    /// all the way. Call holding every lock, with nothing waiting in memory.
    static func run<Message: MessageRecord, Channel: ChannelRecord, User: UserRecord>(
        from source: CacheLayout, to target: CacheLayout, storage: RecordStorage, recordTypes: RecordTypes,
        _ message: Message.Type, _ channel: Channel.Type, _ user: User.Type
    ) throws(FlatCacheError) {
        var state = State(from: source.sealer?.keyID, to: target.sealer?.keyID)
        if let old = source.sealer, let new = target.sealer {
            state.fromKey = wrap(old.key, under: new)
            state.toKey = wrap(new.key, under: old)
        }
        try FileSystem.replaceFile(at: target.keyChangePath, with: contents(state), synchronized: storage.synchronized)
        try convert(from: source, to: target, storage: storage, Message.self, Channel.self, User.self)
        try RecordTypesFile.write(recordTypes, target, synchronized: storage.synchronized)
        try FileSystem.removeFile(at: target.keyChangePath)
        if storage.synchronized { try FileSystem.synchronizeDirectory(at: target.root) }
    }

    /// Finishes the change a crash cut short, toward `layout`'s sealer: the
    /// key the cache was opened with, which must be one of the change's two.
    /// Call holding every lock.
    ///
    /// - Throws: ``FlatCacheError/encryptionKeyRequired(directory:keyID:)`` when
    ///   the files still under the other side need a key this one cannot give
    ///   (opened without a key), ``FlatCacheError/wrongEncryptionKey(directory:keyID:given:)``
    ///   for a key that is neither, ``FlatCacheError/unreadableKeyChange(_:)``
    ///   for a `rekey` file not in its form; each before any file is touched.
    static func finish<Message: MessageRecord, Channel: ChannelRecord, User: UserRecord>(
        _ layout: CacheLayout, directory: URL, storage: RecordStorage, recordTypes: RecordTypes,
        _ message: Message.Type, _ channel: Channel.Type, _ user: User.Type
    ) throws(FlatCacheError) {
        let other = try otherSide(of: layout, directory: directory)
        storage.logger.notice(
            "FlatCache is finishing a key change a crash cut short",
            metadata: ["directory": "\(layout.root)", "toward": "\(layout.sealer?.keyID ?? "plain")"])
        try convert(from: other, to: layout, storage: storage, Message.self, Channel.self, User.self)
        try RecordTypesFile.write(recordTypes, layout, synchronized: storage.synchronized)
        try FileSystem.removeFile(at: layout.keyChangePath)
        if storage.synchronized { try FileSystem.synchronizeDirectory(at: layout.root) }
    }

    /// The layout of the change's side that `layout`'s key is not, with its
    /// sealer when it has a key (unsealed from the `rekey` file with this one).
    /// Touches nothing: what an open checks before anything else.
    static func otherSide(of layout: CacheLayout, directory: URL) throws(FlatCacheError) -> CacheLayout {
        guard let data = try FileSystem.contentsOfFile(at: layout.keyChangePath), let state = parse(data) else {
            throw .unreadableKeyChange(directory)
        }
        let mine = layout.sealer?.keyID
        let (otherID, wrapped): (String?, Data?)
        switch mine {
        case state.to: (otherID, wrapped) = (state.from, state.fromKey)
        case state.from: (otherID, wrapped) = (state.to, state.toKey)
        default:
            let expected = state.to ?? state.from ?? "plain"
            guard let mine else { throw .encryptionKeyRequired(directory: directory, keyID: expected) }
            throw .wrongEncryptionKey(directory: directory, keyID: expected, given: mine)
        }
        guard let otherID else { return layout.sealed(by: nil) }
        guard let sealer = layout.sealer, let wrapped, let key = unwrap(wrapped, under: sealer), key.count == 32,
            let other = try? Sealer(.aes256gcm(key: Data(key)), nonces: sealer.nonces), other.keyID == otherID
        else { throw .encryptionKeyRequired(directory: directory, keyID: otherID) }
        return layout.sealed(by: other)
    }

    /// `key` sealed under `sealer`, as the `rekey` file keeps it.
    private static func wrap(_ key: [UInt8], under sealer: Sealer) -> Data {
        let (bytes, ranges) = sealer.seal([Data(key)], fileName: fileName)
        return bytes[ranges[0]]
    }

    /// The key that `wrapped` holds, when it opens under `sealer`.
    private static func unwrap(_ wrapped: Data, under sealer: Sealer) -> [UInt8]? {
        (try? sealer.open([wrapped], fileName: fileName)).map { Array($0[0]) }
    }

    // MARK: - Converting the files

    /// Rewrites every data file that is under `source`'s key (or plain) under
    /// `target`'s, renaming message files; files already under `target` stay.
    private static func convert<Message: MessageRecord, Channel: ChannelRecord, User: UserRecord>(
        from source: CacheLayout, to target: CacheLayout, storage: RecordStorage,
        _ message: Message.Type, _ channel: Channel.Type, _ user: User.Type
    ) throws(FlatCacheError) {
        let sides = [target, source]
        var renamed = [String: String]()
        var channels: KnownChannels?  // found when a file has no messages to name its channel
        for file in try target.messageFiles() {
            let found = try classify(file.path, sides, storage: storage) { lines throws(Corruption) in
                try canonical(lines, as: Message.self, storage: storage)
            }
            guard let (side, lines) = found else { continue }
            let url: String?
            if let first = lines.first {
                guard side.sealer != target.sealer else { continue }
                url = try? Message(serializedData: first).channelURL
            } else {
                // An empty file reads the same under any key: its name tells which it is under.
                if channels == nil { channels = try KnownChannels(source, target, storage: storage, Channel.self) }
                if channels?.underTarget[file.name] != nil { continue }
                url = channels?.underSource[file.name]
            }
            let old = source.messagesFile(named: file.name)
            guard let url, !url.isEmpty else {
                // A channel cached with no messages whose URL nothing names, or a record
                // that does not decode: it cannot be named under the new key.
                _ = try storage.isolateLocked(old, because: .undecodableRecord(line: 1, reason: "no channel URL to name it by"), moving: false)
                try old.remove()
                continue
            }
            let new = try target.messagesFile(forChannel: url)
            _ = try new.write(lines, synchronized: storage.synchronized)
            let continuity = source.continuityFile(of: old)
            if let (_, continuityLines) = try classify(continuity.path, sides, storage: storage) {
                _ = try target.continuityFile(of: new).write(continuityLines, synchronized: storage.synchronized)
            }
            if new.path != old.path { try old.remove() }
            renamed[old.name] = new.name
        }
        try removeOrphanedContinuity(target)
        for file in [target.channelsFile, target.channelsContinuityFile, target.usersFile, target.outboxFile] {
            let found = try classify(file.path, sides, storage: storage) { lines throws(Corruption) in
                switch file.path {
                case target.channelsFile.path: try canonical(lines, as: Channel.self, storage: storage)
                case target.usersFile.path: try canonical(lines, as: User.self, storage: storage)
                default: try noneAppended(lines)
                }
            }
            guard let (side, lines) = found, side.sealer != target.sealer else { continue }
            _ = try file.write(lines, synchronized: storage.synchronized)
        }
        try convertUsage(from: source, to: target, renamed: renamed, storage: storage)
        // Damaged files set aside under the old key, and temporary files a crash left: they may hold plain text.
        try FileSystem.removeItem(at: target.quarantine.directory)
        try removeTemporaryFiles(in: target.root)
        try removeTemporaryFiles(in: target.messagesDirectory)
        // Every file it names was rewritten, and its bytes are under the old key (or plain).
        try FileSystem.removeItem(at: target.journalPath)
    }

    /// Which side's key the data file at `path` is under, and its records;
    /// `nil` when it is missing, or damaged (then reported and removed).
    /// Sealed sides are tried first: every Base64 line reads as plain.
    ///
    /// - Parameter canonical: The records of a file's lines, canonical: a
    ///   message file's appended lines (format 2) are applied and the result
    ///   written as canonical lines; any other file with appended lines is damaged.
    private static func classify(
        _ path: String, _ sides: [CacheLayout], storage: RecordStorage,
        canonical: (FileLines) throws(Corruption) -> [Data] = noneAppended
    ) throws(FlatCacheError) -> (CacheLayout, [Data])? {
        let ordered = sides.filter { $0.sealer != nil } + sides.filter { $0.sealer == nil }
        var problem = Corruption.unsealable(line: 1)
        search: for side in ordered {
            switch try RecordFile(path: path, sealer: side.sealer).load(finishing: true).contents {
            case .missing: return nil
            case .records(let lines):
                do throws(Corruption) {
                    return (side, try canonical(lines))
                } catch {
                    problem = error
                    break search
                }
            case .corrupt(.unsealable(let line)): problem = .unsealable(line: line)
            case .corrupt(let found):
                problem = found  // damaged whatever the key
                break search
            }
        }
        let file = RecordFile(path: path)
        _ = try storage.isolateLocked(file, because: problem, moving: false)
        try file.remove()
        return nil
    }

    /// The records of `lines`, canonical: those their appended lines (format 2) leave, serialized again.
    private static func canonical<R: CacheRecord>(
        _ lines: FileLines, as type: R.Type, storage: RecordStorage
    ) throws(Corruption) -> [Data] {
        guard !lines.appended.isEmpty else { return lines.records }
        let records = try storage.decode(lines, as: R.self)
        do throws(FlatCacheError) {
            return try storage.serialize(records)
        } catch {
            throw .undecodableRecord(line: 1, reason: "\(error)")
        }
    }

    /// The lines of a file that never holds appended lines; one that does is damaged.
    private static func noneAppended(_ lines: FileLines) throws(Corruption) -> [Data] {
        guard lines.appended.isEmpty else { throw .appendedLinesNotAllowed }
        return lines.records
    }

    /// The channel URLs the channel list names, by their message file's name
    /// under each side: for channels cached with no messages.
    private struct KnownChannels {
        var underSource = [String: String]()
        var underTarget = [String: String]()

        init<Channel: ChannelRecord>(
            _ source: CacheLayout, _ target: CacheLayout, storage: RecordStorage, _ channel: Channel.Type
        ) throws(FlatCacheError) {
            let found = try classify(target.channelsFile.path, [target, source], storage: storage) { lines throws(Corruption) in
                try canonical(lines, as: Channel.self, storage: storage)
            }
            guard let (_, lines) = found else { return }
            for line in lines {
                guard let url = try? Channel(serializedData: line).channelURL, !url.isEmpty else { continue }
                underSource[source.fileKey(forChannel: url) + ".lines"] = url
                underTarget[target.fileKey(forChannel: url) + ".lines"] = url
            }
        }
    }

    /// Removes continuity files whose message file is gone (a crash between their removals).
    private static func removeOrphanedContinuity(_ layout: CacheLayout) throws(FlatCacheError) {
        guard try FileSystem.entry(at: layout.messagesDirectory) == .directory else { return }
        for name in try FileSystem.contentsOfDirectory(at: layout.messagesDirectory) where name.hasSuffix(".continuity") {
            let lines = layout.messagesDirectory + "/" + name.dropLast(".continuity".count) + ".lines"
            guard try FileSystem.entry(at: lines) == .missing else { continue }
            let path = layout.messagesDirectory + "/" + name
            try FileSystem.removeItem(at: path)
            try FileSystem.removeItem(at: path + ".sha256")
        }
    }

    /// Rewrites `usage.lines` under the target key with its channels' new
    /// file names; times of channels whose file is gone are dropped.
    private static func convertUsage(
        from source: CacheLayout, to target: CacheLayout, renamed: [String: String], storage: RecordStorage
    ) throws(FlatCacheError) {
        guard let (side, lines) = try classify(target.usageFile.path, [target, source], storage: storage),
            side.sealer != target.sealer
        else { return }
        var times = [String: ChannelUsage.Times]()
        for line in lines {
            guard let (name, entry) = ChannelUsage.decode(line) else { continue }
            let newName = renamed[name] ?? name
            guard try FileSystem.stamp(at: target.messagesDirectory + "/" + newName) != nil else { continue }
            // The file was rewritten: its mark no longer says anything.
            times[newName] = ChannelUsage.Times(saved: entry.saved, used: entry.used, file: nil)
        }
        _ = try target.usageFile.write(ChannelUsage.encode(times), synchronized: storage.synchronized)
    }

    /// Removes the temporary files (`.<name>.tmp`) a crash left in `folder`.
    private static func removeTemporaryFiles(in folder: String) throws(FlatCacheError) {
        guard try FileSystem.entry(at: folder) == .directory else { return }
        for name in try FileSystem.contentsOfDirectory(at: folder) where name.hasPrefix(".") && name.hasSuffix(".tmp") {
            try FileSystem.removeItem(at: folder + "/" + name)
        }
    }
}
