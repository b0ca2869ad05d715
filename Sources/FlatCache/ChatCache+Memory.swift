/// Giving memory back to the system.
extension ChatCache {
    /// Empties the memory tier: every channel's messages, the channel list
    /// and the users it holds are dropped, and the next load of each reads
    /// its file again. What an app calls on a memory warning
    /// (`UIApplication.didReceiveMemoryWarningNotification`,
    /// `didReceiveMemoryWarning()`).
    ///
    /// ```swift
    /// cache.trimMemory()
    /// ```
    ///
    /// Changes an `async` save made that are not written yet stay in memory,
    /// untouched, and are written as usual: nothing saved is lost (call
    /// ``flush()`` first to write them and so drop them too). Changes saved
    /// with ``CacheTier/memory`` are dropped, as when their files leave
    /// memory under ``Configuration/memoryLimit``.
    ///
    /// It does no disk I/O and only takes the memory tier's own lock, which
    /// is never held across disk work: it returns at once and is safe to call
    /// from the main actor, so it has no `async` form and no blocking twin.
    public func trimMemory() {
        engine.trimMemory()
    }
}
