import Foundation

/// Proving what memory knows of a file is still what is on disk, by the stamps of the file and its sidecar.
extension CachedFile {
    /// The records with every change applied, when what is on disk is known
    /// and still what is there (`stamps`, of the data file and its sidecar);
    /// `.none` otherwise. Engine lock held.
    @_specialize(where R == ChatMessage)
    func current(onDisk stamps: (data: FileStamp?, sidecar: FileStamp?)) -> [R]?? {
        switch disk {
        case .unknown, .summary:
            return .none
        case .viewPrefix(_, let tail):
            return Self.matches([], tail, stamps) ? view : .none
        case .known(let records, let tail):
            guard Self.matches(records, tail, stamps) else { return .none }
            if case .some(let computed) = view { return .some(computed) }
            var ignored = 0
            let computed = Self.applying(unwritten, to: records, tail: tail, dropped: &ignored)
            setView(.some(computed), extendsDisk: noChangesOverDisk)
            updateCost()
            return .some(computed)
        }
    }

    /// What the file holds, as a base for a change made now (see
    /// ``Change/base``), when memory knows it, `stamps` show it unchanged,
    /// and no write of it is under way; `nil` otherwise. Engine lock held.
    func base(matching stamps: (data: FileStamp?, sidecar: FileStamp?)) -> Change<R>.Base? {
        guard writing.isEmpty, let (records, tail) = diskRecords, Self.matches(records, tail, stamps) else { return nil }
        return Change<R>.Base(stamps: stamps, records: { records })
    }

    func recordCount(in engine: CacheEngine) throws(FlatCacheError) -> Int? {
        let stamps = try file.stamps()
        if case .some(let records) = engine.locked({ current(onDisk: stamps) }) { return records?.count }
        return try engine.storage.withLock(file) { () throws(FlatCacheError) -> Int? in
            let read = try engine.storage.loadLocked(file, as: R.self)
            let changes = engine.locked { unwritten }
            var ignored = 0
            return Self.applying(changes, to: read.records, tail: read.tail, dropped: &ignored)?.count
        }
    }

    /// Whether what is known of the file (`records` and their `tail`, or no
    /// file) is still what is on disk, by the files' stamps.
    static func matches(
        _ records: [R]?, _ tail: RecordFile.Tail?, _ stamps: (data: FileStamp?, sidecar: FileStamp?)
    ) -> Bool {
        guard records != nil else { return stamps.data == nil }
        guard let tail else { return false }
        return tail.stamp == stamps.data && tail.sidecarStamp == stamps.sidecar
    }
}
