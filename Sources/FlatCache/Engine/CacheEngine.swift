import Foundation
import Logging

/// The cache's engine: the memory tier in front of the files, write-behind
/// with coalescing, and the threads that do the disk work.
///
/// Loads look in memory first; a file still in memory is trusted after one
/// `stat` shows nobody wrote it since (another process's write changes its
/// stamp, and the next load reads it again). Changes go to memory at once
/// and are written together a short while later (``writeDelay``), one write
/// per file however many changes it had, applied to what is on disk at that
/// moment. Memory is bounded by an estimate of the records' bytes; files
/// least recently used leave first, never while they hold changes not yet written.
final class CacheEngine: @unchecked Sendable {
    let storage: RecordStorage
    /// The memory tier's budget in estimated bytes; 0 keeps nothing.
    let memoryLimit: Int
    /// How long changes wait to be written together; 0 writes before a save returns.
    let writeDelay: Duration
    /// Usage times, expiry and the size limit: told of every write.
    let policy: CachePolicy
    /// Runs a sweep (on ``writeQueue``) when writes may have crossed the size limit.
    let sweeper: @Sendable (CacheEngine) -> Void
    /// The folder's observers in this process: told of every change that lands, in memory or on disk.
    let hub: ChangeHub
    /// The folders memory hits `stat` files in, kept open (one name looked up per `stat`, not the path).
    let folders = FolderHandles()

    // Lock rule (docs/reliability.md, "Liveness"): held only to read or change what memory knows,
    // never across disk work; nothing is resumed, yielded or called out while it is held (the
    // ChangeHub fires on its own queue). Taken inside a file's stripe lock, never the other way round.
    private let lock = NSLock()
    // Guarded by `lock`. Internal rather than private only so that the engine's
    // extensions in CacheEngine+*.swift reach them; nothing outside the engine does.
    var files = [String: any EngineFile]()
    var totalCost = 0
    var clock: UInt64 = 0
    var flushScheduled = false
    var counts = Counts()

    /// How loads were answered since the engine started.
    struct Counts: Hashable, Sendable {
        /// Loads answered from memory.
        var memoryHits = 0
        /// Loads memory could not answer.
        var memoryMisses = 0
        /// Of those, loads that found their file.
        var diskHits = 0
        /// Loads that found no file (or a damaged one).
        var diskMisses = 0
    }

    /// Where write-behind flushes and ``flush()`` run, one at a time.
    let writeQueue = DispatchQueue(label: "FlatCache.write", qos: .utility)
    /// Where `async` loads read files; several at once.
    let readQueue = DispatchQueue(label: "FlatCache.read", qos: .userInitiated, attributes: .concurrent)

    init(
        storage: RecordStorage, memoryLimit: Int, writeDelay: Duration, policy: CachePolicy,
        sweeper: @escaping @Sendable (CacheEngine) -> Void
    ) {
        self.storage = storage
        self.memoryLimit = memoryLimit
        self.writeDelay = writeDelay
        self.policy = policy
        self.sweeper = sweeper
        hub = ChangeHub.shared(forFolder: storage.root)
    }

    /// Runs `body` holding the engine's lock (never across disk work).
    func locked<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    /// Runs blocking `work` on ``readQueue`` for an `async` caller.
    func reading<T: Sendable>(_ work: @escaping @Sendable () throws(FlatCacheError) -> T) async throws(FlatCacheError) -> T {
        try await BlockingWork.run(on: readQueue, work)
    }

    /// Runs blocking `work` on ``writeQueue`` (after write-behind flushes already started) for an `async` caller.
    func writing<T: Sendable>(_ work: @escaping @Sendable () throws(FlatCacheError) -> T) async throws(FlatCacheError) -> T {
        try await BlockingWork.run(on: writeQueue, work)
    }

    /// How loads were answered, and what memory holds: its estimated bytes and its files (those with changes waiting included).
    var statistics: (counts: Counts, bytes: Int, entries: Int) {
        locked { (counts, totalCost, files.values.filter { !$0.isEvicted || $0.isDirty || $0.hasMemoryOnlyChanges }.count) }
    }
}
