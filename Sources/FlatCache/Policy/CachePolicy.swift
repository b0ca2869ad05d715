import Foundation
import Logging

/// The cache's policies as the stores and the engine meet them on every call:
/// when channels were used (``ChannelUsage``), whether one expired
/// (``Configuration/maxAge``), and whether the folder may have outgrown
/// ``Configuration/sizeLimit`` since the last sweep. The sweep itself is
/// ``Sweep``.
final class CachePolicy: @unchecked Sendable {
    /// The most milliseconds since a channel's last save before it expires; `nil`: never.
    let maxAge: Int64?
    /// The folder's byte limit; `nil`: none.
    let sizeLimit: Int?
    /// What a sweep frees the folder down to, in bytes.
    let sweepTarget: Int?
    let clock: CacheClock
    let usage: ChannelUsage
    let storage: RecordStorage
    var logger: Logger { storage.logger }

    // Lock rule (docs/reliability.md, "Liveness"): held only to read or change the fields it guards,
    // sometimes inside a file's stripe lock (never the other way round); nothing is resumed, yielded
    // or called out while it is held.
    private let lock = NSLock()
    // Guarded by `lock`.
    private var counts = Counts()
    /// The folder's bytes at the last scan plus every byte written since: at
    /// least what it holds. `nil` until the first scan.
    private var bytesAtMost: Int?
    private var usageStamp: FileStamp?
    /// When this process last wrote `usage.lines`, by ``clock``.
    private var lastUsageWrite: Int64?

    /// The least time, in milliseconds by ``clock``, between two writes of `usage.lines` by flushes: its
    /// times only order sweeps, and a file written since counts as used now
    /// (see ``Sweep``), so they need not land with every save.
    static let usageWriteInterval: Int64 = 5_000

    /// What the policies did since the cache opened.
    struct Counts: Hashable, Sendable {
        var expirations = 0
        var evictions = 0
    }

    init(configuration: Configuration, storage: RecordStorage, usageFile: RecordFile) {
        maxAge = configuration.maxAge.map(\.saturatingMilliseconds)
        sizeLimit = configuration.sizeLimit
        sweepTarget = configuration.sizeLimit.map { Int((Double($0) * configuration.sweepTarget).rounded(.down)) }
        clock = configuration.clock
        usage = ChannelUsage(file: usageFile)
        self.storage = storage
    }

    /// Whether a sweep has anything to look for.
    var sweeps: Bool { maxAge != nil || sizeLimit != nil }

    /// Records a load (`saved: false`) or save of the channel whose messages are in `file`.
    func touch(_ file: RecordFile, saved: Bool) {
        usage.touch(file.name, at: clock.milliseconds, saved: saved)
    }

    /// Whether the channel whose messages are in `file` expired: its last
    /// save, as this process knows it or another wrote it to `usage.lines`,
    /// is older than ``maxAge``, and its message file is still the one that
    /// save left (another writer that wrote it since saved it then, though
    /// its times may not be written yet). Looks at `usage.lines` and the
    /// message file (a `stat` each) only when memory says expired.
    func isExpired(_ file: RecordFile) -> Bool {
        guard let maxAge else { return false }
        let now = clock.milliseconds
        func expired() -> Bool {
            guard let saved = usage.times(of: file.name)?.saved, saved != ChannelUsage.Times.unknown else { return false }
            return now - saved > maxAge
        }
        guard expired() else { return false }
        refreshUsage()
        guard expired(), let stamp = try? FileSystem.stamp(at: file.path) else { return expired() }
        let usageStamp = try? FileSystem.stamp(at: usage.file.path)
        return !usage.writtenSinceItsTimes(file.name, stamp: stamp, usageStamp: usageStamp)
    }

    /// Reads `usage.lines` again when another process wrote it since this one last did.
    func refreshUsage() {
        guard let stamp = try? FileSystem.stamp(at: usage.file.path),
            lock.withLock({ usageStamp != stamp })
        else { return }
        do {
            try storage.withLock(usage.file) { () throws(FlatCacheError) in try usage.readLocked(logger: logger) }
            lock.withLock { usageStamp = stamp }
        } catch {
            logger.warning("FlatCache could not read usage.lines", metadata: ["error": "\(error)"])
        }
    }

    /// Reads `usage.lines` when the cache opens and expiry needs its times
    /// (``maxAge``). Without expiry nothing reads them before a write or a
    /// sweep, and both read the file themselves (the later time of each
    /// wins), so opening skips it: at 1,000 channels it was most of an open (issue 32).
    func open() {
        if maxAge != nil { refreshUsage() }
    }

    /// Writes the times in memory to `usage.lines` when they changed since
    /// it was last written (see ``ChannelUsage``); a failure is logged and
    /// the times stay for the next try. `keep` (a sweep's) drops the times of
    /// removed channels. Blocks.
    func persistUsage(force: Bool = false, keep: ((String) -> Bool)? = nil) {
        guard !storage.isReadOnly, force || usage.hasChanges else { return }
        do {
            try storage.withLock(usage.file) { () throws(FlatCacheError) in
                let messages = FileSystem.parent(of: usage.file.path) + "/messages/"
                try usage.writeLocked(
                    synchronized: storage.synchronized, logger: logger, now: clock.milliseconds,
                    stamp: { name throws(FlatCacheError) in try FileSystem.stamp(at: messages + name) },
                    keep: keep ?? { _ in true })
                let stamp = try FileSystem.stamp(at: usage.file.path)
                lock.withLock {
                    usageStamp = stamp
                    lastUsageWrite = clock.milliseconds
                }
            }
        } catch {
            logger.warning("FlatCache could not write usage.lines; it tries again with the next write",
                           metadata: ["error": "\(error)"])
        }
    }

    /// ``persistUsage(force:keep:)`` for a flush: at most once per
    /// ``usageWriteInterval``, so that saves in quick succession replace one
    /// file each, not two.
    func persistUsageIfDue() {
        let now = clock.milliseconds
        // A clock set back counts as due, so that a write is never put off for long.
        let due = lock.withLock { lastUsageWrite.map { now - $0 >= Self.usageWriteInterval || now < $0 } ?? true }
        if due { persistUsage() }
    }

    /// Counts `bytes` written; `true` when the folder may now hold more than
    /// ``sizeLimit`` (a sweep should look).
    func wrote(bytes: Int) -> Bool {
        guard let sizeLimit else { return false }
        return lock.withLock {
            guard let known = bytesAtMost else { return false }
            bytesAtMost = known + bytes
            return known <= sizeLimit && known + bytes > sizeLimit
        }
    }

    /// Learns the folder's size from a sweep's scan.
    func scanned(bytes: Int) {
        lock.withLock { bytesAtMost = bytes }
    }

    /// Counts what a sweep removed.
    func count(expired: Int, evicted: Int) {
        lock.withLock {
            counts.expirations += expired
            counts.evictions += evicted
        }
    }

    /// What the policies did since the cache opened.
    var countsSinceOpen: Counts { lock.withLock { counts } }
}
