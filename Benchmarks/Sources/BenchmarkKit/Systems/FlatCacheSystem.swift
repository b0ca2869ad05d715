import FlatCache
import Foundation

/// FlatCache through its `async` API, as an app would use it: saves return
/// once the memory tier holds them, and every write is timed until
/// `flush()` returns, so the figures include the disk work.
package final class FlatCacheSystem: CacheSystem {
    private let folder: URL
    private let configuration: Configuration
    private var cache: ChatCache<ChatMessage, ChatChannel, ChatUser>
    /// The cache ``openAndLoadChannelList()`` last opened, until ``closeOpened()``.
    private var opened: ChatCache<ChatMessage, ChatChannel, ChatUser>?

    /// With `messageLimit` nil, no retention cut: upserts grow channels by one a round.
    /// With `encryption`, every file is sealed (``Configuration/encryption``).
    /// With `sizeLimit` nil, the folder is never swept (XL's folder is larger than the default limit).
    package init(
        folder: URL, durable: Bool, messageLimit: Int?, encryption: Encryption? = nil,
        sizeLimit: Int? = Configuration.defaultSizeLimit
    ) throws {
        self.folder = folder
        configuration = Configuration(
            maxMessagesPerChannel: messageLimit ?? 1_000_000, durability: durable ? .synchronized : .atomic,
            sizeLimit: sizeLimit, encryption: encryption)
        cache = try ChatCache(directory: folder, configuration: configuration)
    }

    package func reopen() throws {
        cache = try ChatCache(directory: folder, configuration: configuration)
    }

    package func saveEverything(_ workload: Workload) throws {
        try waiting { [cache] in
            try await cache.channels.replace(with: workload.channels)
            for (channel, messages) in zip(workload.channels, workload.messages) {
                try await cache.messages.replace(messages, in: channel.channelURL)
            }
            try await cache.flush()
        }
    }

    package func loadEveryChannel(_ urls: [String]) throws -> Int {
        try waiting { [cache] in
            // Files are independent: read them on every core, as an app's task group would.
            try await withThrowingTaskGroup(of: Int.self) { group in
                let width = ProcessInfo.processInfo.activeProcessorCount
                for part in 0..<width {
                    group.addTask {
                        var count = 0
                        for index in stride(from: part, to: urls.count, by: width) {
                            count += try await cache.messages.load(in: urls[index]).count
                        }
                        return count
                    }
                }
                return try await group.reduce(0, +)
            }
        }
    }

    package func loadAgain(_ urls: [String], times: Int) throws -> Int {
        try waiting { [cache] in
            var count = 0
            for _ in 0..<times {
                for url in urls { count += try await cache.messages.load(in: url).count }
            }
            return count
        }
    }

    package func upsert(_ messages: [ChatMessage]) throws {
        try waiting { [cache] in
            for message in messages { try await cache.messages.save(CollectionOfOne(message)) }
            try await cache.flush()
        }
    }

    package func apply(_ changeLogs: [ChangeLog]) throws {
        try waiting { [cache] in
            for log in changeLogs {
                try await cache.messages.applyChangeLog(
                    updated: log.updated, deletedMessageIDs: log.deleted, in: log.channelURL)
            }
            try await cache.flush()
        }
    }

    package func loadPages(_ queries: [PageQuery]) throws -> Int {
        try waiting { [cache] in
            var count = 0
            for query in queries {
                count += try await cache.messages.load(in: query.channelURL, before: query.before, limit: 30).count
            }
            return count
        }
    }

    /// `flatcache verify` through the library: every file against its sidecar, every record decoded.
    package func verifyEverything() throws -> Int {
        try waiting { [cache] in
            let files = try await cache.verify()
            if let bad = files.first(where: { !$0.isValid }) {
                throw BenchmarkError("verify: \(bad.path): \(bad.problem ?? "bad")")
            }
            return files.filter { $0.path.hasPrefix("messages/") }.reduce(0) { $0 + $1.records }
        }
    }

    package func openAndLoadChannelList() throws -> Int {
        let (opened, count) = try waiting { [folder, configuration] in
            let opened = try ChatCache<ChatMessage, ChatChannel, ChatUser>(directory: folder, configuration: configuration)
            return (opened, try await opened.channels.load().count)
        }
        self.opened = opened
        return count
    }

    /// `close()` runs after the sweep the open started (both on the cache's write queue).
    package func closeOpened() throws {
        guard let opened else { return }
        self.opened = nil
        try waiting { try await opened.close() }
    }
}
