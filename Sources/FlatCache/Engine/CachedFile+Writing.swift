import Foundation

/// A write of the changes waiting: staged holding the file's lock, then finished
/// (memory learns what is on disk) or abandoned.
extension CachedFile {
    /// What a write starts from: what is on disk as known when it began.
    enum Base {
        case unknown
        case records([R]?, tail: RecordFile.Tail?, ids: Set<Int64>?)
        /// For changes that only append: enough to check and append them.
        case end(count: Int, last: R?, ids: Set<Int64>, tail: RecordFile.Tail)

        /// The tail of the file's records, when they are known.
        var tail: RecordFile.Tail? {
            switch self {
            case .unknown, .records(nil, _, _): nil
            case .records(_, let tail, _): tail
            case .end(_, _, _, let tail): tail
            }
        }
    }

    /// What memory keeps of a file whose records it let go (``Disk/summary(count:last:tail:)``),
    /// and whether it knows the file's ids.
    typealias Evicted = (count: Int, last: R?, tail: RecordFile.Tail, idsKnown: Bool)

    func stage(in engine: CacheEngine) throws(FlatCacheError) -> StagedStep {
        try staging(in: engine).get()
    }

    /// ``stage(in:)``, specialized for ``ChatMessage``: a flush calls it through
    /// ``EngineFile``, so without it every write ran generic code, looking up
    /// types as it went (issue 32). It returns a `Result` because the compiler
    /// cannot specialize ahead of time a function that throws a typed error (it crashes).
    @_specialize(where R == ChatMessage)
    private func staging(in engine: CacheEngine) -> Result<StagedStep, FlatCacheError> {
        Result { () throws(FlatCacheError) in try stageChanges(in: engine) }
    }

    /// The work of ``stage(in:)`` (specialized with ``staging(in:)``).
    private func stageChanges(in engine: CacheEngine) throws(FlatCacheError) -> StagedStep {
        let (changes, added, known, evicted) = engine.locked {
            () -> ([Change<R>], (records: [R], lines: [Data])?, Base, Evicted?) in
            writing = pending
            pending = []
            let added = Self.appended(writing)
            var evicted: Evicted?
            if case .summary(let count, let last, let tail) = disk { evicted = (count, last, tail, diskIDs != nil) }
            if case .viewPrefix(let count, let tail) = disk, added != nil, let rule, case .some(let records?) = view {
                if diskIDs == nil { diskIDs = rule.ids(records, count) }
                return (writing, added, .end(count: count, last: count > 0 ? records[count - 1] : nil, ids: diskIDs!, tail: tail), nil)
            }
            if case .summary(let count, let last, let tail) = disk, added != nil, let ids = diskIDs {
                return (writing, added, .end(count: count, last: last, ids: ids, tail: tail), evicted)
            }
            guard let (records, tail) = diskRecords else { return (writing, added, .unknown, evicted) }
            return (writing, added, .records(records, tail: tail, ids: diskIDs), nil)
        }
        guard !changes.isEmpty else { return .noChanges }
        // New records after the last, on a file whose end memory knows: the append itself checks the
        // data file's stamp (on the descriptor it writes through), so only the sidecar's is taken here:
        // one path looked up, not two (issue 32). Anything else, a changed file too, takes the way below.
        if let rule, let added, let tail = known.tail, try file.sidecarStamp() == tail.sidecarStamp,
            let staged = try stageAppend(added, to: known, rule: rule)
        {
            (installing, appending) = ((nil, 0), (staged.count, added.records, nil))
            return .write(staged.write)
        }
        // Edits of a file memory keeps only the end of: their lines appended without reading it (format 2).
        // Not new messages when memory knows none of the file's ids (it took lines without reading it):
        // the file is read below, so that a message saved again is not appended again, and memory then
        // knows its records, so that the messages after take no read at all.
        if let rule, let evicted, added == nil || evicted.idsKnown, try file.sidecarStamp() == evicted.tail.sidecarStamp,
            let staged = try stageBlindEdits(changes, count: evicted.count, last: evicted.last, tail: evicted.tail, rule: rule)
        {
            return .write(staged)
        }
        // Edits, and new messages, into a file memory knows nothing of: checked against its sidecar and
        // appended as upsert lines, not decoded (format 2). A new message into a channel not opened since
        // launch then costs a read and a digest, not a decode of every record, and a search that follows
        // learns it from the lines (``ChangeLedger``), not by reading the channel (issue 34).
        if let rule, evicted == nil, case .unknown = known,
            let staged = try stageColdEdits(changes, rule: rule, storage: engine.storage)
        {
            return .write(staged)
        }
        let stamps = try file.stamps()
        var base = Base.unknown
        var read: [R]?
        switch known {
        case .end(_, _, _, let tail) where Self.matches([], tail, stamps): base = known
        case .records(let records, let tail, _) where Self.matches(records, tail, stamps): base = known
        default: break
        }
        // Changes from the last one that replaces everything on need not know what is on disk.
        // (A closure, not `\.replacesAll`: a key path in generic code is instantiated on every call.)
        let start = changes.lastIndex(where: { $0.replacesAll }) ?? 0
        // What the attachment says of the old content is not true of the new: it goes first.
        if changes[start].replacesAll { try file.removeAttachment() }
        // A replace made before another writer changed the file carries what that writer did over it: it needs the file.
        let rebases = changes[start].needsFile(stamps)
        if case .unknown = base, (start == 0 && !changes[0].replacesAll) || rebases {
            let found = try engine.storage.loadLocked(file, as: R.self)
            (base, read) = (.records(found.records, tail: found.tail, ids: nil), found.records ?? [])
        }
        // New records after the last: append their lines, without applying the changes one by one.
        if let rule, let added, let staged = try stageAppend(added, to: base, rule: rule) {
            (installing, appending) = ((nil, 0), (staged.count, added.records, read))
            return .write(staged.write)
        }
        var onDisk: [R]?
        var current: (records: [R]?, tail: RecordFile.Tail?)?
        // Whether `onDisk` was read from the file here, rather than taken from memory.
        var readHere = read != nil
        switch base {
        case .unknown: onDisk = nil
        case .records(let records, let tail, _): (onDisk, current) = (records, rebases ? (records, tail) : nil)
        case .end:
            // The same records as at the start: what memory knows of the disk only changes under the file's lock.
            if let known = engine.locked({ diskRecords }) {
                onDisk = known.records
            } else {
                onDisk = try engine.storage.loadLocked(file, as: R.self).records
                readHere = true
            }
        }
        // Edits and deletions: their lines appended, when the file is known as it is now (format 2).
        if start == 0, !changes[0].replacesAll, let onDisk, let tail = base.tail,
            let staged = try stageEdits(
                changes[...], onDisk: onDisk, read: readHere, tail: tail, capacity: rule?.capacity ?? .max,
                limit: rule?.limit ?? .max)
        {
            return .write(staged)
        }
        var dropped = 0
        let result = changes[start...].reduce(onDisk) { $1.applied(to: $0, current: current, dropped: &dropped) }
        installing = (result, dropped)
        if changes[start...].contains(where: { $0.voidsAttachment?.isSet ?? false }) { try file.removeAttachment() }
        guard let result else { return stamps.data == nil ? .nothing : .remove }
        // A replace written as it was made brings its records' bytes: no second serialization.
        let last = changes[changes.count - 1]
        if start == changes.count - 1, let lines = last.replacementLines, !last.rebases(over: current) {
            return .write(try engine.storage.stageReplace(file, lines))
        }
        return .write(try engine.storage.stageReplace(file, try engine.storage.serialize(result)))
    }

    /// The records dropped by retention in the write just staged.
    var droppedInWrite: Int { installing.dropped }

    @_specialize(where R == ChatMessage)
    func finish(tail: RecordFile.Tail?) {
        if let (onDiskCount, added, read) = appending, let tail {
            finishAppend(onDiskCount: onDiskCount, added: added, read: read, tail: tail)
        } else if let blind = appendingBlind, let tail {
            // The ids memory knew of the file, with those the lines added (a deleted one may stay: an id
            // known that is not there makes a later append take the slower way, never a wrong one). So the
            // next new message needs no read to tell a message saved again.
            var ids = diskIDs
            if ids != nil, let rule {
                for change in writing {
                    guard let said = change.lineRecords else {
                        ids = nil
                        break
                    }
                    for record in said.upserts { ids!.insert(rule.id(record)) }
                }
            }
            setDisk(.summary(count: blind.count, last: blind.last, tail: tail))
            diskIDs = ids
            setView(.none, extendsDisk: false)
        } else if var inPlace = installingInPlace, let tail {
            // The records the lines were appended after, changed in place: those the write read, or
            // memory's, when it still knows that file (a prefix of the view is detached first: the same
            // records). Once the view and `disk` (or `installingInPlace`) let go, the only reference,
            // unless a load handed them to the app (then the change copies them, as any would). Not a
            // copy of the channel and a release of the old records, as before (issue 33): the engine's
            // lock is held for less time than that took, though no longer on every core.
            installingInPlace = nil
            var read = inPlace.read
            inPlace.read = nil
            setView(.none, extendsDisk: false)
            if var records = read {
                read = nil
                applyInPlace(inPlace.apply, to: &records, tail: tail)
            } else if case .known(var records?, let known?) = disk, known.stamp == inPlace.after {
                disk = .unknown
                applyInPlace(inPlace.apply, to: &records, tail: tail)
            } else {
                // Evicted meanwhile, or memory knew an older file than the one written: the next read reads it.
                setDisk(.unknown)
            }
        } else {
            let records = installing.records
            if let tail, let records, tail.lineCount == records.count || installingIsFile {
                setDisk(.known(records: records, tail: tail))
            } else {
                setDisk(records == nil ? .known(records: nil, tail: nil) : .unknown)
            }
            setView(.none, extendsDisk: false)
        }
        writing = []
        installing = (nil, 0)
        installingIsFile = false
        installingInPlace = nil
        appendingBlind = nil
        appending = nil
        updateCost()
    }

    /// Applies `apply` to `records` in place and makes them the records on disk, with `tail`.
    private func applyInPlace(_ apply: @Sendable (inout [R]) -> Void, to records: inout [R], tail: RecordFile.Tail) {
        apply(&records)
        setDisk(.known(records: records, tail: tail))
    }

    func abandon(keepingChanges: Bool, staged: Bool) {
        if keepingChanges {
            pending = writing + pending
        } else if !staged {
            pending = []
        }
        writing = []
        setDisk(.unknown)
        setView(.none, extendsDisk: false)
        installing = (nil, 0)
        installingIsFile = false
        installingInPlace = nil
        appendingBlind = nil
        appending = nil
        updateCost()
    }
}
