import FlatCache
import Foundation

/// One way of caching chat data, driven through the operations a chat screen needs.
/// Every system stores the same records with the same serialization (`ChatMessage.serialize()`).
package protocol CacheSystem: AnyObject {
    /// Saves the channel list, then each channel's messages (one call or transaction per channel).
    func saveEverything(_ workload: Workload) throws
    /// Loads every channel's messages; returns how many.
    func loadEveryChannel(_ urls: [String]) throws -> Int
    /// Upserts each message into its channel, one call or transaction per message.
    func upsert(_ messages: [ChatMessage]) throws
    /// Applies each channel's change log, one call or transaction per channel.
    func apply(_ changeLogs: [ChangeLog]) throws
    /// Loads the page of up to 30 messages before each query's timestamp; returns how many.
    func loadPages(_ queries: [PageQuery]) throws -> Int
    /// Opens the store afresh and loads the channel list; returns how many channels.
    func openAndLoadChannelList() throws -> Int
}

/// The systems compared, by name.
package enum SystemKind: String, CaseIterable, Sendable {
    case flatCache = "FlatCache"
    case sqlite = "SQLite (GRDB)"
    case handWritten = "Hand-written"

    /// Opens (creating when needed) this system's store in `folder`.
    package func open(in folder: URL, durable: Bool) throws -> any CacheSystem {
        switch self {
        case .flatCache: try FlatCacheSystem(folder: folder, durable: durable)
        case .sqlite: try SQLiteSystem(folder: folder, durable: durable)
        case .handWritten: try HandWrittenSystem(folder: folder, durable: durable)
        }
    }
}

/// A change log for one channel: updated messages and deleted ids.
package struct ChangeLog: Sendable {
    package let channelURL: String
    package let updated: [ChatMessage]
    package let deleted: [Int64]
}

/// "The 30 messages before this time in this channel."
package struct PageQuery: Sendable {
    package let channelURL: String
    package let before: Int64
}

extension Workload {
    package var channelURLs: [String] { channels.map(\.channelURL) }

    /// One new message per channel, different in every round.
    package func upserts(round: Int) -> [ChatMessage] {
        channels.indices.map { index in
            var message = messages[index][messages[index].count / 2]
            message.messageID = 1_000_000_000 + Int64(round * channels.count + index)
            message.createdAt = (messages[index].last?.createdAt ?? 0) + Int64(round + 1)
            message.text = "new in round \(round)"
            return message
        }
    }

    /// Per channel, 5 edited messages and 2 deleted, different ones in every round.
    package func changeLogs(round: Int) -> [ChangeLog] {
        channels.indices.map { index in
            let list = messages[index]
            let start = (round * 7) % max(1, list.count - 7)
            let updated = list[start..<start + 5].map { original in
                var edited = original
                edited.text = "edited in round \(round): " + original.text
                edited.updatedAt = original.createdAt + 1
                return edited
            }
            return ChangeLog(
                channelURL: channels[index].channelURL, updated: updated,
                deleted: [list[start + 5].messageID, list[start + 6].messageID])
        }
    }

    /// `count` page queries spread over channels and times.
    package func pageQueries(count: Int) -> [PageQuery] {
        var random = SplitMix64(seed: 30)
        return (0..<count).map { _ in
            let index = random.next(below: channels.count)
            let list = messages[index]
            return PageQuery(channelURL: channels[index].channelURL, before: list[random.next(below: list.count)].createdAt)
        }
    }
}
