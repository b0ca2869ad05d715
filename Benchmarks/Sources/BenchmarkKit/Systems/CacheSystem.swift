import FlatCache
import Foundation

/// One way of caching chat data, driven through the operations a chat screen needs.
/// Every system stores the same records with the same serialization (`ChatMessage.serialize()`).
package protocol CacheSystem: AnyObject {
    /// Drops what the system holds in memory and opens its store afresh, as a new app launch would.
    func reopen() throws
    /// Saves the channel list, then each channel's messages (one call or transaction per channel).
    func saveEverything(_ workload: Workload) throws
    /// Loads every channel's messages, on every core where the system can; returns how many.
    func loadEveryChannel(_ urls: [String]) throws -> Int
    /// Loads each channel's messages `times` times over, one after another; returns how many.
    func loadAgain(_ urls: [String], times: Int) throws -> Int
    /// Upserts each message into its channel, one call or transaction per message.
    func upsert(_ messages: [ChatMessage]) throws
    /// Applies each channel's change log, one call or transaction per channel.
    func apply(_ changeLogs: [ChangeLog]) throws
    /// Loads the page of up to 30 messages before each query's timestamp; returns how many.
    func loadPages(_ queries: [PageQuery]) throws -> Int
    /// Opens the store afresh and loads the channel list; returns how many channels.
    /// The store it opened stays open until ``closeOpened()``.
    func openAndLoadChannelList() throws -> Int
    /// Closes the store ``openAndLoadChannelList()`` last opened, once the
    /// work it started in the background (FlatCache's sweep at open) has
    /// ended: untimed, between rounds, so that no round runs beside the
    /// rounds before it.
    func closeOpened() throws
    /// Checks every stored byte as the system's own check does, every message decoded; returns how many messages.
    func verifyEverything() throws -> Int
}

extension CacheSystem {
    /// A system that keeps nothing open after ``openAndLoadChannelList()`` has nothing to close.
    package func closeOpened() throws {}

    /// A system without a check of its own sits the verify row out.
    package func verifyEverything() throws -> Int {
        throw BenchmarkError("\(Self.self) has no verify")
    }
}

/// A benchmark that found something wrong: a lost message, a check that failed.
package struct BenchmarkError: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}

/// The systems compared, by name.
package enum SystemKind: String, CaseIterable, Sendable {
    case flatCache = "FlatCache"
    case sqlite = "SQLite (GRDB)"
    case handWritten = "Hand-written"

    /// Opens (creating when needed) this system's store in `folder`; with
    /// `messageLimit`, each channel keeps only its newest `messageLimit` messages.
    /// With `unlimitedSize`, FlatCache has no size limit (SQLite never has one).
    package func open(in folder: URL, durable: Bool, messageLimit: Int? = nil, unlimitedSize: Bool = false) throws -> any CacheSystem {
        switch self {
        case .flatCache:
            try FlatCacheSystem(
                folder: folder, durable: durable, messageLimit: messageLimit,
                sizeLimit: unlimitedSize ? nil : Configuration.defaultSizeLimit)
        case .sqlite: try SQLiteSystem(folder: folder, durable: durable, messageLimit: messageLimit)
        case .handWritten: try HandWrittenSystem(folder: folder, durable: durable, messageLimit: messageLimit)
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

    package init(channelURL: String, before: Int64) {
        self.channelURL = channelURL
        self.before = before
    }
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

    /// A burst: `count` new messages arriving one at a time, round robin
    /// into the first `channelCount` channels, each newer than the last;
    /// different ones in every round.
    package func burst(round: Int, count: Int = 1_000, channelCount: Int = 10) -> [ChatMessage] {
        (0..<count).map { index in
            let channel = index % channelCount
            var message = messages[channel][index % messages[channel].count]
            message.messageID = 2_000_000_000 + Int64(round * count + index)
            message.createdAt = (messages[channel].last?.createdAt ?? 0) + Int64(round * count + index + 1) * 1_000
            message.text = "burst \(round), message \(index)"
            return message
        }
    }

    /// `count` page queries spread over times and over the first `channelCount` channels (all by default).
    package func pageQueries(count: Int, channelCount: Int? = nil) -> [PageQuery] {
        var random = SplitMix64(seed: 30)
        return (0..<count).map { _ in
            let index = random.next(below: channelCount ?? channels.count)
            let list = messages[index]
            return PageQuery(channelURL: channels[index].channelURL, before: list[random.next(below: list.count)].createdAt)
        }
    }
}
