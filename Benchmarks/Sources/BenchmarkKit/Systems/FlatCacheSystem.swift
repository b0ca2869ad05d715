import FlatCache
import Foundation

/// FlatCache through its public API, as an app would use it.
package final class FlatCacheSystem: CacheSystem {
    private let folder: URL
    private let configuration: Configuration
    private let cache: ChatCache<ChatMessage, ChatChannel, ChatUser>

    package init(folder: URL, durable: Bool) throws {
        self.folder = folder
        // No retention cut during the benchmark: upserts grow channels by one a round.
        configuration = Configuration(maxMessagesPerChannel: 1_000_000, durability: durable ? .synchronized : .atomic)
        cache = try ChatCache(directory: folder, configuration: configuration)
    }

    package func saveEverything(_ workload: Workload) throws {
        try cache.channels.replace(with: workload.channels)
        for (channel, messages) in zip(workload.channels, workload.messages) {
            try cache.messages.replace(messages, in: channel.channelURL)
        }
    }

    package func loadEveryChannel(_ urls: [String]) throws -> Int {
        try urls.reduce(0) { $0 + (try cache.messages.load(in: $1).count) }
    }

    package func upsert(_ messages: [ChatMessage]) throws {
        for message in messages { try cache.messages.save(CollectionOfOne(message)) }
    }

    package func apply(_ changeLogs: [ChangeLog]) throws {
        for log in changeLogs {
            try cache.messages.applyChangeLog(updated: log.updated, deletedMessageIDs: log.deleted, in: log.channelURL)
        }
    }

    package func loadPages(_ queries: [PageQuery]) throws -> Int {
        try queries.reduce(0) { $0 + (try cache.messages.load(in: $1.channelURL, before: $1.before, limit: 30).count) }
    }

    package func openAndLoadChannelList() throws -> Int {
        try ChatCache(directory: folder, configuration: configuration).channels.load().count
    }
}
