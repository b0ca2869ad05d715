import Foundation

/// A fixed set of locks, one chosen per file path, so that two operations on
/// the same file never interleave while operations on different files mostly
/// run in parallel.
///
/// An operation takes one stripe at a time; ``withAllLocks(_:)`` takes them
/// all in index order, so the two can never deadlock.
final class LockStripes: Sendable {
    private let locks: [NSLock]

    /// Creates `count` stripes.
    init(count: Int = 64) {
        locks = (0..<count).map { _ in NSLock() }
    }

    /// The stripes of the cache folder at `canonicalRoot`, shared by every
    /// ``ChatCache`` this process opens on it, so two instances on one folder
    /// are as safe as one.
    static func shared(forFolder canonicalRoot: String) -> LockStripes {
        registryLock.withLock {
            if let stripes = registry[canonicalRoot] { return stripes }
            let stripes = LockStripes()
            registry[canonicalRoot] = stripes
            return stripes
        }
    }

    private static let registryLock = NSLock()
    // Guarded by registryLock. A few dozen bytes per folder ever opened; never freed.
    nonisolated(unsafe) private static var registry = [String: LockStripes]()

    /// Runs `body` holding the stripe for `path`.
    func withLock<T, E: Error>(for path: String, _ body: () throws(E) -> T) throws(E) -> T {
        let lock = locks[stripe(for: path)]
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    /// Runs `body` holding every stripe: a barrier against all other operations.
    func withAllLocks<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        for lock in locks { lock.lock() }
        defer { for lock in locks.reversed() { lock.unlock() } }
        return try body()
    }

    private func stripe(for path: String) -> Int {
        var hasher = Hasher()
        hasher.combine(path)
        return Int(UInt(bitPattern: hasher.finalize()) % UInt(locks.count))
    }
}
