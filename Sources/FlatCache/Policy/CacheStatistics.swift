import Foundation

/// What a cache holds (changes waiting for write-behind included), on disk
/// and in memory, and what its tiers and
/// policies did since it opened: see ``ChatCache/statistics()``.
public struct CacheStatistics: Sendable, Hashable, Codable {
    /// Every byte of every file in the cache folder: data files, sidecars,
    /// the `format`, `records`, `usage.lines` and `preloaded` files, and `quarantine/`.
    public var diskBytes = 0
    /// How many files those are.
    public var diskFiles = 0
    /// Channels in the channel list: what the cache holds, changes waiting
    /// for write-behind included (else the lines of `channels.lines`).
    public var channels = 0
    /// Channels with a message file, or with messages waiting to be written to one.
    public var channelsWithMessages = 0
    /// Messages the channels hold: the lines of each message file, or, for
    /// a channel with changes waiting for write-behind, its messages with them
    /// applied (as a load returns them). A file may hold up to its retention
    /// slack more lines than ``Configuration/maxMessagesPerChannel`` until it
    /// is next compacted; loads return the newest.
    public var messages = 0
    /// Users: what the cache holds, changes waiting for write-behind
    /// included (else the lines of `users.lines`).
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
    /// The folder part, read from the folder of `layout`: the disk figures
    /// as they are, the counts of records with `changed` (records with the
    /// changes not yet written applied, by path; `nil`: no file) in place of
    /// the lines of those files.
    static func onDisk(_ layout: CacheLayout, changed: [String: Int?] = [:]) throws(FlatCacheError) -> CacheStatistics {
        let scan = try FolderScan(layout, usageFile: layout.usageFile)
        var statistics = CacheStatistics()
        statistics.diskBytes = scan.totalBytes
        statistics.diskFiles = scan.totalFiles
        statistics.quarantinedBytes = scan.quarantinedBytes
        let count = { (file: RecordFile) throws(FlatCacheError) -> Int? in
            if let counted = changed[file.path] { return counted }
            return try lines(in: file)
        }
        statistics.channels = try count(layout.channelsFile) ?? 0
        statistics.users = try count(layout.usersFile) ?? 0
        var messageFiles = Set(scan.messageFiles.map(\.file.path))
        for path in changed.keys where FileSystem.parent(of: path) == layout.messagesDirectory { messageFiles.insert(path) }
        for path in messageFiles {
            guard let records = try count(RecordFile(path: path)) else { continue }
            statistics.channelsWithMessages += 1
            statistics.messages += records
        }
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
