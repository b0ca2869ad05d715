import Foundation

/// What a sweep removed.
public struct SweepResult: Sendable, Hashable, CustomStringConvertible {
    /// Channels whose messages were removed because they were older than ``Configuration/maxAge``.
    public var expiredChannels = 0
    /// Channels whose messages were removed to bring the folder under ``Configuration/sizeLimit``.
    public var evictedChannels = 0
    /// Entries of `quarantine/` removed for the size limit.
    public var quarantineEntriesRemoved = 0
    /// Whether the users were removed for the size limit (every channel's messages were gone first).
    public var removedUsers = false
    /// Whether the channel list was removed for the size limit (last of all).
    public var removedChannelList = false
    /// The folder's bytes before the sweep.
    public var bytesBefore = 0
    /// The folder's bytes after it.
    public var bytesAfter = 0

    /// A result with the given counts; every argument defaults to nothing removed.
    public init(
        expiredChannels: Int = 0, evictedChannels: Int = 0, quarantineEntriesRemoved: Int = 0,
        removedUsers: Bool = false, removedChannelList: Bool = false, bytesBefore: Int = 0, bytesAfter: Int = 0
    ) {
        self.expiredChannels = expiredChannels
        self.evictedChannels = evictedChannels
        self.quarantineEntriesRemoved = quarantineEntriesRemoved
        self.removedUsers = removedUsers
        self.removedChannelList = removedChannelList
        self.bytesBefore = bytesBefore
        self.bytesAfter = bytesAfter
    }

    /// Such as `2 expired, 10 evicted, 1 quarantine entry removed; 1048576 → 700000 bytes`.
    public var description: String {
        var parts = ["\(expiredChannels) expired", "\(evictedChannels) evicted"]
        if quarantineEntriesRemoved > 0 {
            parts.append("\(quarantineEntriesRemoved) quarantine \(quarantineEntriesRemoved == 1 ? "entry" : "entries") removed")
        }
        if removedUsers { parts.append("users removed") }
        if removedChannelList { parts.append("channel list removed") }
        return parts.joined(separator: ", ") + "; \(bytesBefore) → \(bytesAfter) bytes"
    }
}

/// Removes expired channels and, past the size limit, what was used least
/// recently (see ``Configuration/sizeLimit`` for the order), holding the
/// folder's sweep lock so that two processes never sweep at once.
struct Sweep {
    let engine: CacheEngine
    let layout: CacheLayout
    var policy: CachePolicy { engine.policy }
    var storage: RecordStorage { engine.storage }

    /// Sweeps now. Blocks: run it on the engine's ``CacheEngine/writeQueue``.
    func run() throws(FlatCacheError) -> SweepResult {
        try storage.requireWritable()
        return try storage.locks.withSweepLock { () throws(FlatCacheError) -> SweepResult in try runLocked() }
    }

    /// Sweeps for the engine (at open, after writes crossed the limit): a failure is logged, not thrown.
    func runInBackground() {
        do {
            let result = try run()
            if result.expiredChannels + result.evictedChannels + result.quarantineEntriesRemoved > 0 {
                storage.logger.info("FlatCache swept the cache folder", metadata: ["result": "\(result)"])
            }
        } catch {
            storage.logger.warning("FlatCache could not sweep the cache folder", metadata: ["error": "\(error)"])
        }
    }

    private func runLocked() throws(FlatCacheError) -> SweepResult {
        // The usual sweep (every one at open): nothing expires, so only the folder's size matters.
        // A walk that keeps nothing tells whether it is under the limit; only past it is every
        // file looked at again, to choose what goes.
        if policy.maxAge == nil {
            let total = try FileSystem.regularFileBytes(under: layout.root).bytes
            guard total > (policy.sizeLimit ?? .max) else {
                policy.scanned(bytes: total)
                return SweepResult(bytesBefore: total, bytesAfter: total)
            }
        }
        let scan = try FolderScan(layout, usageFile: layout.usageFile)
        var result = SweepResult(bytesBefore: scan.totalBytes, bytesAfter: scan.totalBytes)
        var total = scan.totalBytes
        guard policy.maxAge != nil || total > (policy.sizeLimit ?? .max) else {
            policy.scanned(bytes: total)
            return result
        }
        // What every other process wrote before this sweep began counts.
        try storage.withLock(layout.usageFile) { () throws(FlatCacheError) in
            try policy.usage.readLocked(logger: storage.logger)
        }
        let now = policy.clock.milliseconds
        let times = policy.usage.all
        var removed = Set<String>()

        func remove(_ message: FolderScan.MessageFile) throws(FlatCacheError) -> Bool {
            guard try engine.removeIfUnchanged(message.file, stamp: message.stamp) else { return false }
            total -= message.bytes
            removed.insert(message.file.name)
            return true
        }

        if let maxAge = policy.maxAge {
            for message in scan.messageFiles {
                let saved = savedTime(message, times[message.file.name], usageStamp: scan.usageStamp, now: now)
                if now - saved > maxAge, try remove(message) { result.expiredChannels += 1 }
            }
        }

        if let limit = policy.sizeLimit, let target = policy.sweepTarget, total > limit {
            for entry in scan.quarantined.sorted(by: { ($0.modified, $0.path) < ($1.modified, $1.path) }) {
                guard total > target else { break }
                try FileSystem.removeItem(at: entry.path)
                total -= entry.bytes
                result.quarantineEntriesRemoved += 1
            }
            let byUse = scan.messageFiles.filter { !removed.contains($0.file.name) }.map { message in
                (message, lastUse(message, times[message.file.name], usageStamp: scan.usageStamp, now: now))
            }.sorted { ($0.1, $0.0.file.name) < ($1.1, $1.0.file.name) }
            for (message, _) in byUse {
                guard total > target else { break }
                if try remove(message) { result.evictedChannels += 1 }
            }
            if total > target, scan.usersBytes > 0, try removeWhole(layout.usersFile) {
                total -= scan.usersBytes
                result.removedUsers = true
            }
            if total > target, scan.channelsBytes > 0, try removeWhole(layout.channelsFile) {
                total -= scan.channelsBytes
                result.removedChannelList = true
            }
        }

        policy.usage.forget(removed)
        // Only what this sweep removed: a channel saved since the scan began has times that count.
        policy.persistUsage(force: !removed.isEmpty, keep: { !removed.contains($0) })
        result.bytesAfter = total
        policy.scanned(bytes: total)
        policy.count(expired: result.expiredChannels, evicted: result.evictedChannels)
        return result
    }

    /// The channel list or the users file, removed with its sidecar unless changes to it wait in memory.
    private func removeWhole(_ file: RecordFile) throws(FlatCacheError) -> Bool {
        guard let stamp = try FileSystem.stamp(at: file.path) else { return false }
        return try engine.removeIfUnchanged(file, stamp: stamp)
    }

    /// When `message` was last saved: as recorded, else its file's
    /// modification time; now when the file was written after `usage.lines`.
    private func savedTime(
        _ message: FolderScan.MessageFile, _ times: ChannelUsage.Times?, usageStamp: FileStamp?, now: Int64
    ) -> Int64 {
        if writtenSince(usageStamp, message) { return now }
        guard let saved = times?.saved, saved != ChannelUsage.Times.unknown else { return message.stamp.modified.milliseconds }
        return saved
    }

    /// Whether `message` was written by another writer after its times were
    /// recorded: that writer may not have written its times yet (see
    /// ``ChannelUsage/writtenSinceItsTimes(_:stamp:usageStamp:)``).
    private func writtenSince(_ usageStamp: FileStamp?, _ message: FolderScan.MessageFile) -> Bool {
        policy.usage.writtenSinceItsTimes(message.file.name, stamp: message.stamp, usageStamp: usageStamp)
    }

    /// When `message` was last used. A file written after `usage.lines` was
    /// (by a process that has not written its times yet) counts as used now:
    /// never evict what another process just saved.
    private func lastUse(
        _ message: FolderScan.MessageFile, _ times: ChannelUsage.Times?, usageStamp: FileStamp?, now: Int64
    ) -> Int64 {
        if writtenSince(usageStamp, message) { return now }
        return times?.used ?? message.stamp.modified.milliseconds
    }
}
