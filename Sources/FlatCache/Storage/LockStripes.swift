import Foundation

/// A fixed set of locks, one chosen per file, so that two operations on the
/// same file never interleave, in this process or another one on the same
/// folder, while operations on different files mostly run in parallel.
///
/// Each stripe is a mutex (threads here) and one byte of the folder's
/// `format` marker, locked through a descriptor of its own (other processes,
/// and other ``ChatCache`` instances). The marker is never replaced, so every
/// process locks the same file; no lock file is added to the folder. The
/// stripe of a file comes from its name alone, so every process picks the
/// same one. An operation takes one stripe at a time; ``withAllLocks(_:)``
/// takes them all, in order, so the two can never deadlock.
final class LockStripes: Sendable {
    // Lock rule (docs/reliability.md, "Liveness"): a stripe is held across a file's disk work, so
    // under it no continuation is resumed, no stream yielded and no code of the app's run; the
    // engine's lock and the policy's may be taken inside a stripe, never a stripe inside them.
    private let locks: [NSLock]
    /// The folder's sweep lock within this process (see ``withSweepLock(_:)``).
    private let sweepLock = NSLock()
    /// The file whose bytes are the cross-process locks.
    private let lockFilePath: String

    /// Creates `count` stripes locking bytes of `lockFilePath`.
    init(count: Int = 64, lockFilePath: String) {
        locks = (0..<count).map { _ in NSLock() }
        self.lockFilePath = lockFilePath
    }

    /// The stripes of the cache folder at `canonicalRoot`, shared by every
    /// ``ChatCache`` this process opens on it, so two instances on one folder
    /// are as safe as one.
    static func shared(forFolder canonicalRoot: String, lockFilePath: String) -> LockStripes {
        registryLock.withLock {
            if let stripes = registry[canonicalRoot] { return stripes }
            let stripes = LockStripes(lockFilePath: lockFilePath)
            registry[canonicalRoot] = stripes
            return stripes
        }
    }

    private static let registryLock = NSLock()
    // Guarded by registryLock. A few dozen bytes per folder ever opened; never freed.
    nonisolated(unsafe) private static var registry = [String: LockStripes]()

    /// Runs `body` holding the stripe for `path`.
    ///
    /// - Parameter shared: Take the other processes' side of the lock as a
    ///   reader (a read-only cache, which may not open the marker for
    ///   writing): it still excludes every writer.
    func withLock<T>(
        for path: String, shared: Bool = false, _ body: () throws(FlatCacheError) -> T
    ) throws(FlatCacheError) -> T {
        let index = stripe(for: path)
        let lock = locks[index]
        lock.lock()
        defer { lock.unlock() }
        let descriptor = try lockAcrossProcesses(bytes: index..<index + 1, shared: shared)
        defer { descriptor.map(FileSystem.closeLock) }
        return try body()
    }

    /// Runs `body` holding every stripe: a barrier against all other operations.
    func withAllLocks<T>(_ body: () throws(FlatCacheError) -> T) throws(FlatCacheError) -> T {
        for lock in locks { lock.lock() }
        defer { for lock in locks.reversed() { lock.unlock() } }
        let descriptor = try lockAcrossProcesses(bytes: 0..<locks.count, shared: false)
        defer { descriptor.map(FileSystem.closeLock) }
        return try body()
    }

    /// Locks `bytes` of the marker through a new descriptor; `nil` when the
    /// marker is gone (the folder was removed from outside: nothing to guard
    /// until a save recreates it and the next open marks it again).
    /// Runs `body` holding the folder's sweep lock: one size or expiry sweep
    /// at a time, across every instance and process, so that two never
    /// remove the same files. The byte after the stripes' in the lock file.
    func withSweepLock<T>(_ body: () throws(FlatCacheError) -> T) throws(FlatCacheError) -> T {
        sweepLock.lock()
        defer { sweepLock.unlock() }
        let descriptor = try lockAcrossProcesses(bytes: locks.count..<locks.count + 1, shared: false)
        defer { descriptor.map(FileSystem.closeLock) }
        return try body()
    }

    private func lockAcrossProcesses(bytes: Range<Int>, shared: Bool) throws(FlatCacheError) -> Int32? {
        guard let descriptor = try FileSystem.openForLocking(lockFilePath, shared: shared) else { return nil }
        do {
            try FileSystem.lock(descriptor, bytes: bytes, shared: shared, path: lockFilePath)
        } catch {
            FileSystem.closeLock(descriptor)
            throw error
        }
        return descriptor
    }

    /// FNV-1a of the file's name: the same in every process (unlike `Hasher`,
    /// which is seeded per process), and the name is unique in a cache folder.
    private func stripe(for path: String) -> Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in FileSystem.name(of: path).utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3
        }
        return Int(hash % UInt64(locks.count))
    }
}
