/// Write-behind: waiting for saves to reach the disk.
extension ChatCache {
    /// Writes every change saved before the call and returns when all are on
    /// disk, with the configured ``Configuration/durability``.
    ///
    /// The `async` saves return once the memory tier holds their change; the
    /// files are written within ``Configuration/writeDelay``, several changes
    /// to one file in one write. Call `flush()` where the app must know its
    /// data landed: before its process may be suspended or end, or before
    /// another process reads the folder.
    ///
    /// Example: `try await cache.messages.save(CollectionOfOne(sent))`
    /// Example: `try await cache.flush()   // on disk now`
    ///
    /// Its blocking twin, for a tool about to exit, is ``Blocking/flush()``.
    ///
    /// A write that fails after its save returned is reported here: its
    /// changes are dropped from memory (the next load reads what is on disk)
    /// and the first such error is thrown; the others are logged.
    /// - important: Requires disk I/O, on the engine's thread.
    /// - Returns: The files this flush wrote or found unchanged, and the records retention dropped in them.
    /// - Throws: A file-system error for a file whose changes did not land.
    @discardableResult
    public func flush() async throws(FlatCacheError) -> SaveResult {
        try await engine.flush()
    }

    /// Flushes (see ``flush()``) and writes when each channel was last saved
    /// and used (`usage.lines`, which flushes write at most every 5 seconds),
    /// and waits for a save of the search index under way (`search.lines`):
    /// what an app calls when it is done with the cache or about to be
    /// suspended. The cache stays usable.
    ///
    /// - Throws: As ``flush()``.
    public func close() async throws(FlatCacheError) {
        _ = try await BlockingWork.run(on: engine.writeQueue) { [engine, search] () throws(FlatCacheError) in
            _ = try engine.closeNow()
            search.service.waitForSnapshotWrites()
        }
    }

    /// Removes every cached channel, message and user, the outbox (messages
    /// not sent yet), changes not yet written, and the quarantine folder:
    /// what an app does when its user logs out (see ``Blocking/removeAll()``);
    /// returns when done. The folder stays a cache.
    ///
    /// - Throws: ``FlatCacheError/readOnlyCache(_:)`` or a file-system error.
    public func removeAll() async throws(FlatCacheError) {
        try await engine.writing { () throws(FlatCacheError) in try self.removeAll() }
    }
}
