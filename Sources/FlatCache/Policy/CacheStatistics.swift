import Foundation

/// What a cache holds on disk and in memory, and what its tiers and
/// policies did since it opened: see ``ChatCache/statistics()``.
public struct CacheStatistics: Sendable, Hashable, Codable {
    /// Every byte of every file in the cache folder: data files, sidecars,
    /// the `format`, `records`, `usage.lines` and `preloaded` files, and `quarantine/`.
    public var diskBytes = 0
    /// How many files those are.
    public var diskFiles = 0
    /// Channels in the channel list (lines of `channels.lines`).
    public var channels = 0
    /// Channels with a message file.
    public var channelsWithMessages = 0
    /// Messages in the message files (their lines). A channel may hold up to
    /// its retention slack more than ``Configuration/maxMessagesPerChannel``
    /// until its file is next compacted; loads return the newest.
    public var messages = 0
    /// Users (lines of `users.lines`).
    public var users = 0
    /// The bytes in `quarantine/`.
    public var quarantinedBytes = 0
    /// The memory tier's estimated bytes (see ``Configuration/memoryLimit``):
    /// the records it holds, changes waiting for write-behind included (each
    /// record a save added counts, whether or not its file was read).
    public var memoryBytes = 0
    /// Files the memory tier holds: their records, changes waiting to be
    /// written to them, or that they are missing (a load of a channel never
    /// cached reads no file the second time).
    public var memoryEntries = 0
    /// Loads answered from memory since the cache opened.
    public var memoryHits = 0
    /// Loads memory could not answer, which read the disk.
    public var memoryMisses = 0
    /// Of those, loads that found their file on disk.
    public var diskHits = 0
    /// Loads that found no file (or a damaged one): a miss in both tiers.
    public var diskMisses = 0
    /// Channels removed because they expired (``Configuration/maxAge``) since the cache opened.
    public var expirations = 0
    /// Channels removed for the size limit (``Configuration/sizeLimit``) since the cache opened.
    public var evictions = 0

    /// Statistics with every count zero.
    public init() {}
}

extension CacheStatistics {
    /// The on-disk part, read from the folder of `layout`.
    static func onDisk(_ layout: CacheLayout) throws(FlatCacheError) -> CacheStatistics {
        let scan = try FolderScan(layout, usageFile: layout.usageFile)
        var statistics = CacheStatistics()
        statistics.diskBytes = scan.totalBytes
        statistics.diskFiles = scan.totalFiles
        statistics.quarantinedBytes = scan.quarantinedBytes
        statistics.channels = try lines(in: layout.channelsFile)
        statistics.users = try lines(in: layout.usersFile)
        statistics.channelsWithMessages = scan.messageFiles.count
        for message in scan.messageFiles { statistics.messages += try lines(in: message.file) }
        return statistics
    }

    /// The lines of `file`'s data file as it is now (0 when missing); not checked against its sidecar.
    private static func lines(in file: RecordFile) throws(FlatCacheError) -> Int {
        guard let data = try FileSystem.contentsOfFile(at: file.path) else { return 0 }
        return data.withUnsafeBytes { buffer in
            guard var cursor = buffer.baseAddress else { return 0 }
            let end = cursor + buffer.count
            var count = 0
            while cursor < end, let found = memchr(cursor, 0x0A, end - cursor) {
                count += 1
                cursor = UnsafeRawPointer(found) + 1
            }
            return count
        }
    }
}
