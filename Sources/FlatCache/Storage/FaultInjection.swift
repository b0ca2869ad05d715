// Debug builds only (Package.swift defines FLATCACHE_FAULTS for them): a release build's
// system calls take no lock and check nothing.
#if FLATCACHE_FAULTS
import Foundation

/// Failures the tests make the file system "return", to prove every error
/// path: each ``FileSystem`` call asks here before it makes its system call.
///
/// A fault applies only below a path prefix (a test's own temporary folder),
/// so tests running in parallel never see each other's faults.
enum FaultInjection {
    /// One armed failure.
    struct Fault: Sendable {
        /// The system call to fail.
        var operation: FlatCacheError.FileOperation
        /// Only paths starting with this fail.
        var pathPrefix: String
        /// The `errno` to fail with; `nil` with ``maximumWriteSize`` for short writes only.
        var code: POSIXErrorCode?
        /// How many matching calls to let through before failing.
        var after = 0
        /// How many matching calls to fail before the fault disarms itself.
        var count = Int.max
        /// For `.write`: let each `write` call take at most this many bytes.
        var maximumWriteSize: Int?
    }

    // Lock rule (docs/reliability.md, "Liveness"): held only to read or change the fields it guards;
    // nothing is resumed, yielded or called out while it is held.
    private static let lock = NSLock()
    // Guarded by `lock`.
    nonisolated(unsafe) private static var faults = [Fault]()
    /// `.read` calls counted per watched path prefix (see ``countReads(below:)``).
    nonisolated(unsafe) private static var readCounts = [String: Int]()

    /// Arms `fault` until ``disarm(below:)``.
    static func arm(_ fault: Fault) {
        lock.withLock { faults.append(fault) }
    }

    /// Disarms every fault for paths below `prefix`.
    static func disarm(below prefix: String) {
        lock.withLock { faults.removeAll { $0.pathPrefix == prefix } }
    }

    /// Starts counting the `.read` calls (each `read` system call of a
    /// file's contents) on paths below `prefix`, from zero.
    static func countReads(below prefix: String) {
        lock.withLock { readCounts[prefix] = 0 }
    }

    /// The `.read` calls below `prefix` since ``countReads(below:)``.
    static func readCount(below prefix: String) -> Int {
        lock.withLock { readCounts[prefix] ?? 0 }
    }

    /// Stops counting the `.read` calls below `prefix`.
    static func stopCountingReads(below prefix: String) {
        lock.withLock { _ = readCounts.removeValue(forKey: prefix) }
    }

    /// The error `operation` on `path` must fail with now, if any.
    /// Counts the call when it is a `.read` below a watched prefix.
    static func failure(_ operation: FlatCacheError.FileOperation, _ path: String) -> Int32? {
        lock.withLock {
            if operation == .read, !readCounts.isEmpty {
                for prefix in readCounts.keys where path.hasPrefix(prefix) { readCounts[prefix, default: 0] += 1 }
            }
            guard !faults.isEmpty,
                let index = faults.firstIndex(where: {
                    $0.operation == operation && $0.code != nil && $0.count > 0 && path.hasPrefix($0.pathPrefix)
                })
            else { return nil }
            if faults[index].after > 0 {
                faults[index].after -= 1
                return nil
            }
            faults[index].count -= 1
            return faults[index].code?.rawValue
        }
    }

    /// The most bytes one `write` call on `path` may take now.
    static func writeLimit(_ path: String) -> Int? {
        lock.withLock {
            guard !faults.isEmpty else { return nil }
            return faults.first { $0.operation == .write && path.hasPrefix($0.pathPrefix) }?.maximumWriteSize
        }
    }
}
#endif
