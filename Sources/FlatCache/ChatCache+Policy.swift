/// The policies: sweeps for expiry and the size limit, and statistics.
extension ChatCache {
    /// Removes expired channels (``Configuration/maxAge``) and, when the
    /// folder holds more than ``Configuration/sizeLimit``, what was used least
    /// recently, down to ``Configuration/sweepTarget`` of the limit.
    ///
    /// The cache sweeps by itself when it opens and when its writes may have
    /// crossed the limit; call this to sweep now (say, when the app goes to
    /// the background). Waits for write-behind saves already under way. One
    /// sweep runs at a time across every process sharing the folder; a
    /// channel with changes not yet written, or written by another process
    /// while the sweep ran, is kept.
    ///
    /// ```swift
    /// let swept = try await cache.sweep()
    /// print(swept)   // 3 expired, 0 evicted; 1048576 → 900000 bytes
    /// ```
    /// - important: Requires disk I/O, on the engine's thread.
    /// - Returns: What it removed.
    /// - Throws: ``FlatCacheError/readOnlyCache(_:)`` or a file-system error.
    @discardableResult
    public func sweep() async throws(FlatCacheError) -> SweepResult {
        try await engine.writing { [engine, layout] () throws(FlatCacheError) in
            try Sweep(engine: engine, layout: layout).run()
        }
    }

    /// What the cache holds on disk and in memory, and how its tiers and
    /// policies did since it opened.
    ///
    /// The channels, messages and users are what the cache holds, changes
    /// waiting for write-behind included (and memory-only ones,
    /// ``CacheTier/memory``): a file with none is counted by its lines, one
    /// with some by its records with them applied, as a load would return
    /// them (its file is read when memory does not hold it). The memory part
    /// counts what memory holds, waiting changes included. The disk figures
    /// (bytes, files, quarantine) are the folder as it is now: waiting
    /// changes are not in them until written (``flush()``). It lists the
    /// folder and counts the lines of every other data file, without
    /// decoding or checking them.
    ///
    /// ```swift
    /// let statistics = try await cache.statistics()
    /// print(statistics.diskBytes, statistics.memoryHits, statistics.evictions)
    /// ```
    /// - important: Requires disk I/O: reads every data file.
    /// - Returns: The statistics.
    /// - Throws: A file-system error.
    public func statistics() async throws(FlatCacheError) -> CacheStatistics {
        try await engine.reading { [self] () throws(FlatCacheError) in try statisticsNow() }
    }

    /// ``statistics()`` for a caller that may block (a command-line tool).
    ///
    /// - important: Requires disk I/O on the caller's thread: never call it from the main actor.
    /// - Returns: The statistics.
    /// - Throws: A file-system error.
    func statisticsNow() throws(FlatCacheError) -> CacheStatistics {
        var statistics = try CacheStatistics.onDisk(layout, changed: engine.recordCountsWithChanges())
        let (counts, bytes, entries) = engine.statistics
        statistics.memoryBytes = bytes
        statistics.memoryEntries = entries
        statistics.memoryHits = counts.memoryHits
        statistics.memoryMisses = counts.memoryMisses
        statistics.diskHits = counts.diskHits
        statistics.diskMisses = counts.diskMisses
        let policy = engine.policy.countsSinceOpen
        statistics.expirations = policy.expirations
        statistics.evictions = policy.evictions
        return statistics
    }
}
