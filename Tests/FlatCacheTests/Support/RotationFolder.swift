@testable import FlatCache
import Foundation

/// A cache folder holding every file kind, for key change tests: message
/// files of several channels (one cached with no messages, named only by
/// the channel list), a channel's continuity, the channel list's token,
/// users and outbox entries.
enum RotationFolder {
    typealias Cache = ChatCache<ChatMessage, ChatChannel, ChatUser>

    static let keyA = Data((0..<32).map { UInt8(7 &* $0 &+ 1) })
    static let keyB = Data((0..<32).map { UInt8(200 &- 3 &* $0) })

    /// The channel cached with no messages: only the channel list names its URL.
    static let quietChannel = "rotation-quiet-channel"

    static func channel(_ index: Int) -> String { "rotation-channel-\(index)" }

    /// Every channel URL, the quiet one included.
    static func channelURLs(_ count: Int) -> [String] { (0..<count).map(channel) + [quietChannel] }

    /// A configuration with `encryption`, no size sweep, reporting damage to `damage`.
    static func configuration(_ encryption: Encryption?, damage: DamageRecorder? = nil) -> Configuration {
        var configuration = damage?.configuration() ?? Configuration(logger: LogRecorder().logger)
        configuration.sizeLimit = nil
        configuration.encryption = encryption
        return configuration
    }

    /// What the folder holds, as read through a cache.
    struct Contents: Equatable, CustomStringConvertible {
        var messages: [String: [ChatMessage]]
        var channels: [ChatChannel]
        var users: [ChatUser]
        var continuity: ChannelContinuity
        var listToken: String?
        var outbox: [String]

        var description: String {
            "\(messages.count) channels of \(messages.values.map(\.count).reduce(0, +)) messages, "
                + "\(channels.count) in the list, \(users.count) users, continuity \(continuity), "
                + "list token \(listToken ?? "none"), outbox \(outbox)"
        }
    }

    /// Fills the folder at `url` under `encryption`: `channelCount` channels of `perChannel` messages and the rest.
    static func fill(_ url: URL, encryption: Encryption?, channelCount: Int, perChannel: Int) async throws {
        let cache = try Cache(directory: url, configuration: configuration(encryption))
        let users = (0..<12).map { ChatUser(userID: "user-\($0)", nickname: "Nickname \($0)") }
        for index in 0..<channelCount {
            let messages = (0..<perChannel).map { number in
                ChatMessage(
                    messageID: Int64(index * 10_000 + number + 1), channelURL: channel(index), createdAt: Int64(number + 1) * 1_000,
                    sender: users[number % users.count], text: "channel \(index) message \(number): " + String(repeating: "x", count: 120))
            }
            if index == 0 {
                try cache.messages.blocking.replace(messages, in: channel(index), covering: 0...Int64(perChannel) * 1_000)
            } else {
                try cache.messages.blocking.replace(messages, in: channel(index))
            }
        }
        try cache.messages.blocking.setChangeLogToken("message token 0", in: channel(0))
        try cache.messages.blocking.replace([], in: quietChannel)
        try cache.channels.blocking.replace(with: channelURLs(channelCount).enumerated().map { index, url in
            ChatChannel(channelURL: url, kind: .group, name: "Channel \(index)", memberCount: 3, createdAt: Int64(index))
        })
        try cache.channels.blocking.setChangeLogToken("list token")
        try cache.users.blocking.save(users)
        for number in 0..<3 {
            let message = ChatMessage(
                messageID: 0, channelURL: channel(number), createdAt: 900_000 + Int64(number), text: "waiting \(number)")
            _ = try await cache.outbox.send(message, requestID: "request-\(number)")
        }
        try await cache.close()
    }

    /// What `cache` holds of the channels in `urls`.
    static func contents(of cache: Cache, channels urls: [String]) async throws -> Contents {
        var messages = [String: [ChatMessage]]()
        for url in urls { messages[url] = try cache.messages.blocking.load(in: url) }
        return Contents(
            messages: messages, channels: try cache.channels.blocking.load(), users: try cache.users.blocking.load(),
            continuity: try cache.messages.blocking.continuity(in: channel(0)),
            listToken: try cache.channels.blocking.changeLogToken(),
            outbox: try await cache.outbox.entries().map { "\($0.requestID) \($0.message.channelURL) \($0.message.text)" })
    }
}
