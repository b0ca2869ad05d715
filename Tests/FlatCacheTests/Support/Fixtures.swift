import FlatCache
import Foundation

/// Small, readable records for tests.
enum Fixtures {
    static let channelURL = "sendbird_group_channel_test"

    static let mina = ChatUser(userID: "mina", nickname: "Mina", profileURL: "https://example.com/mina.png")

    static func message(
        _ id: Int64, at createdAt: Int64, in channelURL: String = channelURL, text: String? = nil
    ) -> ChatMessage {
        ChatMessage(
            messageID: id, channelURL: channelURL, createdAt: createdAt,
            sender: mina, text: text ?? "message \(id)")
    }

    /// `count` messages with ids 1... and creation times 1_000, 2_000, ...
    static func messages(_ count: Int, in channelURL: String = channelURL) -> [ChatMessage] {
        (1...Int64(count)).map { message($0, at: $0 * 1_000, in: channelURL) }
    }

    static func channel(
        _ url: String, lastMessageAt: Int64, kind: ChatChannel.Kind = .group, name: String? = nil
    ) -> ChatChannel {
        ChatChannel(
            channelURL: url, kind: kind, name: name ?? url, memberCount: 2, createdAt: 0,
            lastMessage: message(1, at: lastMessageAt, in: url))
    }
}
