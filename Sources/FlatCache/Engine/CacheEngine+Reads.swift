import Foundation

/// Loads: from memory when a `stat` proves the file unchanged, else read (and kept).
extension CacheEngine {
    /// The records of `file` with every change applied, from memory when it
    /// holds them and the file is unchanged on disk, else read (and kept).
    ///
    /// Blocks: call it from ``readQueue`` (or a thread that may block).
    func records<R: CacheRecord>(
        _ file: RecordFile, rule: AppendRule<R>? = nil, tier: CacheTier = .memoryAndDisk
    ) throws(FlatCacheError) -> [R]? {
        switch tier {
        case .memory: return try memoryOnlyRecords(file)
        case .disk: return try diskRecords(file, as: R.self)
        case .memoryAndDisk: break
        }
        if case .some(let hit) = try memoryHit(file, as: R.self) { return hit }
        return try storage.withLock(file) { () throws(FlatCacheError) -> [R]? in
            let read = try storage.loadLocked(file, as: R.self)
            return locked {
                counts.memoryMisses += 1
                if read.records == nil { counts.diskMisses += 1 } else { counts.diskHits += 1 }
                let entry = self.entry(file, rule: rule)
                let before = entry.cost
                let records = entry.install(read: read.records, tail: read.tail, bytes: read.bytes)
                settle(entry, costBefore: before)
                return records
            }
        }
    }

    /// The records of `file` as a load sees them, without bringing a file
    /// memory does not hold into it: for a reader of every file (the search
    /// index), which must not push the app's channels out of memory. `stamp`
    /// is the data file's stamp, taken before (a write after it shows as another stamp later).
    ///
    /// Blocks: call it from a thread that may block.
    func recordsLeavingMemory<R: CacheRecord>(
        _ file: RecordFile, rule: AppendRule<R>?, stamp: FileStamp?
    ) throws(FlatCacheError) -> [R]? {
        if case .some(let hit) = current(file, as: R.self, onDisk: stamp) { return hit }
        // Memory holds it (changes wait to be written, or another writer came): the usual load keeps them.
        if holds(file) { return try records(file, rule: rule) }
        return try storage.withLock(file) { () throws(FlatCacheError) -> [R]? in
            try storage.loadLocked(file, as: R.self).records
        }
    }

    /// The paths of the files memory holds: some may not be on disk yet (changes waiting for write-behind).
    func heldPaths() -> [String] {
        locked { Array(files.keys) }
    }

    /// Whether memory holds changes to `file` not on disk yet (waiting for write-behind, or memory-only).
    func hasUnwrittenChanges(_ file: RecordFile) -> Bool {
        locked { files[file.path].map { $0.isDirty || $0.hasMemoryOnlyChanges } ?? false }
    }

    /// Whether memory holds `file` (its records, or changes to it waiting to be written).
    func holds(_ file: RecordFile) -> Bool {
        locked { files[file.path] != nil }
    }

    /// ``CacheTier/memory``: the records of `file` from memory, or `nil`; never a read.
    func memoryOnlyRecords<R: CacheRecord>(_ file: RecordFile) throws(FlatCacheError) -> [R]? {
        if case .some(let hit) = try memoryHit(file, as: R.self) { return hit }
        locked { counts.memoryMisses += 1 }
        return nil
    }

    /// ``CacheTier/disk``: the records in `file` as read now, after its
    /// changes waiting for write-behind are written; nothing kept in memory.
    /// Blocks.
    func diskRecords<R: CacheRecord>(_ file: RecordFile, as type: R.Type) throws(FlatCacheError) -> [R]? {
        try writeWaitingChanges(file)
        return try storage.withLock(file) { () throws(FlatCacheError) -> [R]? in
            let read = try storage.loadLocked(file, as: R.self)
            locked { if read.records == nil { counts.diskMisses += 1 } else { counts.diskHits += 1 } }
            return read.records
        }
    }

    /// The records of `file` from memory, when it holds them and one `stat`
    /// shows the file unchanged; `.none` otherwise. No read, no file lock.
    /// The `stat` is relative to the file's folder (``FolderHandles``).
    ///
    /// The `stat` comes first and the engine lock once after it: a write
    /// that memory learns of in between leaves memory a newer stamp than the
    /// one taken, so the stamps differ and it is a miss, never a stale hit.
    /// A file memory does not hold costs that `stat` too, beside the read
    /// that follows.
    func memoryHit<R: CacheRecord>(_ file: RecordFile, as type: R.Type) throws(FlatCacheError) -> [R]?? {
        current(file, as: R.self, onDisk: try folders.dataStamp(of: file))
    }

    /// The records memory holds of `file` when `stamp` shows it as memory knows it.
    @_specialize(where R == ChatMessage)
    private func current<R: CacheRecord>(_ file: RecordFile, as type: R.Type, onDisk stamp: FileStamp?) -> [R]?? {
        locked {
            guard let entry = files[file.path] as? CachedFile<R> else { return .none }
            let before = entry.cost
            let found = entry.current(onDisk: stamp)
            if found != nil {
                counts.memoryHits += 1
                settle(entry, costBefore: before)
            }
            return found
        }
    }

    /// ``records(_:rule:)`` for `async` callers: a memory hit is answered
    /// on the caller's thread (one `stat`, no read, no file lock); a miss is
    /// read on ``readQueue``, never on a cooperative-pool thread.
    func records<R: CacheRecord>(
        _ file: RecordFile, rule: AppendRule<R>? = nil, tier: CacheTier = .memoryAndDisk
    ) async throws(FlatCacheError) -> [R]? {
        if tier == .memory { return try memoryOnlyRecords(file) }
        if tier == .memoryAndDisk, case .some(let hit) = try memoryHit(file, as: R.self) { return hit }
        return try await BlockingWork.run(on: readQueue) { () throws(FlatCacheError) in
            try self.records(file, rule: rule, tier: tier)
        }
    }

    /// Makes memory hold `file` as it is on disk (read when memory does not
    /// hold it current), so that a memory-only change applies over what the
    /// file holds and a memory-only load sees it. Blocks.
    func readIntoMemory<R: CacheRecord>(_ file: RecordFile, rule: AppendRule<R>?) throws(FlatCacheError) {
        let _: [R]? = try records(file, rule: rule, tier: .memoryAndDisk)
    }

    /// For every file with changes waiting for write-behind (or memory-only
    /// ones), by path, how many records it holds with them applied (`nil`:
    /// no file then): what ``ChatCache/statistics()`` counts for it instead
    /// of its lines on disk. Reads a file memory does not know; blocks.
    func recordCountsWithChanges() throws(FlatCacheError) -> [String: Int?] {
        let changed = locked { files.values.filter { $0.isDirty || $0.hasMemoryOnlyChanges } }
        var counts = [String: Int?]()
        for entry in changed { counts[entry.file.path] = try entry.recordCount(in: self) }
        return counts
    }
}
