import Foundation

/// Proving what memory knows of a file is still what is on disk: by the data
/// file's stamp for a load, by both files' stamps for a write.
extension CachedFile {
    /// The records with every change applied, when what is on disk is known
    /// and still what is there (`data`, the data file's stamp; see
    /// ``RecordFile/dataStamp()``); `.none` otherwise. Engine lock held.
    @_specialize(where R == ChatMessage)
    func current(onDisk data: FileStamp?) -> [R]?? {
        switch disk {
        case .unknown, .summary:
            return .none
        case .viewPrefix(_, let tail):
            return Self.matches([], tail, data: data) ? view : .none
        case .known(let records, let tail):
            guard Self.matches(records, tail, data: data) else { return .none }
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
        let stamp = try file.dataStamp()
        if case .some(let records) = engine.locked({ current(onDisk: stamp) }) { return records?.count }
        return try engine.storage.withLock(file) { () throws(FlatCacheError) -> Int? in
            let read = try engine.storage.loadLocked(file, as: R.self)
            let changes = engine.locked { unwritten }
            var ignored = 0
            return Self.applying(changes, to: read.records, tail: read.tail, dropped: &ignored)?.count
        }
    }

    /// Whether what is known of the file (`records` and their `tail`, or no
    /// file) is still what is on disk, by the data file's stamp.
    static func matches(_ records: [R]?, _ tail: RecordFile.Tail?, data stamp: FileStamp?) -> Bool {
        guard records != nil else { return stamp == nil }
        guard let tail else { return false }
        return tail.stamp == stamp
    }

    /// Whether what is known of the file (`records` and their `tail`, or no
    /// file) is still what is on disk, by both files' stamps: what a write checks.
    static func matches(
        _ records: [R]?, _ tail: RecordFile.Tail?, _ stamps: (data: FileStamp?, sidecar: FileStamp?)
    ) -> Bool {
        guard records != nil else { return stamps.data == nil }
        guard let tail else { return false }
        return tail.stamp == stamps.data && tail.sidecarStamp == stamps.sidecar
    }
}
