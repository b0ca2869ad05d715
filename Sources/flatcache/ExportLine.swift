import FlatCache
import Foundation

/// One line of an export: a record and its kind, or an empty data file, as one flat JSON object.
///
/// ```
/// {"channelKind":"group","channelURL":"trip",...,"kind":"channel",...}
/// {"file":"users","kind":"empty"}
/// {"channelURL":"trip","file":"messages","kind":"empty"}
/// ```
enum ExportLine: Codable {
    case channel(ChatChannel)
    case message(ChatMessage)
    case user(ChatUser)
    /// A data file that exists and holds no records: information a list of records cannot carry
    /// (a channel cached as empty is not a channel never cached).
    case empty(EmptyFile)

    enum Kind: String, Codable, CaseIterable {
        case channel, message, user, empty
    }

    private enum Keys: String, CodingKey {
        case kind
    }

    init(from decoder: any Decoder) throws {
        switch try decoder.container(keyedBy: Keys.self).decode(Kind.self, forKey: .kind) {
        case .channel: self = .channel(try ChatChannel(from: decoder))
        case .message: self = .message(try ChatMessage(from: decoder))
        case .user: self = .user(try ChatUser(from: decoder))
        case .empty: self = .empty(try EmptyFile(from: decoder))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        switch self {
        case .channel(let channel):
            try container.encode(Kind.channel, forKey: .kind)
            try channel.encode(to: encoder)
        case .message(let message):
            try container.encode(Kind.message, forKey: .kind)
            try message.encode(to: encoder)
        case .user(let user):
            try container.encode(Kind.user, forKey: .kind)
            try user.encode(to: encoder)
        case .empty(let file):
            try container.encode(Kind.empty, forKey: .kind)
            try file.encode(to: encoder)
        }
    }
}

/// An empty data file of a cache: `channels.lines`, `users.lines`, or one channel's message file.
enum EmptyFile: Hashable, Codable {
    case channels
    case users
    /// The message file of the channel with this URL.
    case messages(channelURL: String)

    /// Which file, with a message file's URL as UTF-8 bytes: equal only when the library's file is the same.
    var key: [UInt8] {
        switch self {
        case .channels: Array("channels".utf8)
        case .users: Array("users".utf8)
        case .messages(let url): Array("messages/".utf8) + Array(url.utf8)
        }
    }

    enum File: String, Codable {
        case channels, users, messages
    }

    private enum Keys: String, CodingKey {
        case file, channelURL
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Keys.self)
        let file = try container.decode(File.self, forKey: .file)
        let channelURL = try container.decodeIfPresent(String.self, forKey: .channelURL)
        switch (file, channelURL) {
        case (.messages, let url?): self = .messages(channelURL: url)
        case (.messages, nil):
            throw DecodingError.keyNotFound(
                Keys.channelURL, .init(codingPath: [], debugDescription: "A message file needs its channel URL."))
        case (.channels, nil): self = .channels
        case (.users, nil): self = .users
        case (.channels, _?), (.users, _?):
            throw DecodingError.dataCorrupted(
                .init(codingPath: [Keys.channelURL], debugDescription: "Only a message file has a channel URL."))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        switch self {
        case .channels: try container.encode(File.channels, forKey: .file)
        case .users: try container.encode(File.users, forKey: .file)
        case .messages(let url):
            try container.encode(File.messages, forKey: .file)
            try container.encode(url, forKey: .channelURL)
        }
    }
}
