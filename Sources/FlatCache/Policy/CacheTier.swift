/// Which of the cache's tiers a call uses, chosen per call with a store's
/// `using(_:)`: memory and disk (the default), memory only, or disk only.
///
/// ```swift
/// // Show a channel only if it is in memory: no file is read.
/// let instant = try await cache.messages.using(.memory).loadIfCached(in: channelURL)
/// // Cache a channel nobody looks at now without pushing others out of memory.
/// try await cache.messages.using(.disk).replace(fetched, in: "archived-channel")
/// ```
public enum CacheTier: Sendable, Hashable, CaseIterable {
    /// Both tiers: a load is answered from memory when it holds the file
    /// (one `stat` shows it current), else reads the file and keeps it; a
    /// save changes memory at once and writes the file (within
    /// ``Configuration/writeDelay`` for the `async` saves).
    case memoryAndDisk

    /// Memory only: a load is answered from memory or is a miss (`nil`,
    /// `[]`), never reading a file; a save changes what this cache's loads
    /// return, memory-only loads included, and never writes a file. (A save
    /// into a file memory does not hold reads it first, once, so that its
    /// change applies over what the file holds.) What such a save changed is gone
    /// when the file leaves memory (the memory budget) and when a save that
    /// writes the file comes; until then it applies over whatever the file
    /// holds, another process's writes included. A memory-only save works on
    /// a read-only cache too.
    case memory

    /// Disk only: a load reads the file and keeps nothing in memory (changes
    /// waiting for write-behind are written first, so it sees every save; a
    /// memory-only change is not on disk, so it does not); a save writes the
    /// file before it returns and leaves nothing of it in memory.
    case disk
}

extension RecordStorage {
    /// Throws ``FlatCacheError/readOnlyCache(_:)`` for a save into `tier` when
    /// the cache only reads: a memory-only save writes nothing, so it may.
    func requireWritable(for tier: CacheTier) throws(FlatCacheError) {
        if tier != .memory { try requireWritable() }
    }
}
