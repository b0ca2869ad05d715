import ArgumentParser
import FlatCache
import Foundation

struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the whole cache as JSON Lines: one object per line, with a \"kind\" of channel, message or user.",
        discussion: "Channels first (newest first), then every channel's messages (oldest first), then users. `flatcache import` reads it back: exporting a cache and importing it into an empty folder gives the same files, byte for byte.")

    @Argument(help: "The cache folder.")
    var directory: String

    func run() throws {
        try CacheOptions(directory: directory).read({ cache in
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            var out = Data()
            func line(_ exported: ExportLine) throws {
                out.append(try encoder.encode(exported))
                out.append(UInt8(ascii: "\n"))
            }
            for channel in try cache.channels.load() { try line(.channel(channel)) }
            for message in try cache.messages.loadAll() { try line(.message(message)) }
            for user in try cache.users.load() { try line(.user(user)) }
            FileHandle.standardOutput.write(out)
        }, otherTypes: { summary in
            throw ToolError("\(directory) holds \(summary.recordTypes.map { "\($0)" } ?? "unknown record types"); export reads the built-in record types only.")
        })
    }
}

extension CacheOptions {
    init(directory: String) {
        self.init()
        self.directory = directory
    }
}

/// One line of an export: a record and its kind, as one flat JSON object.
enum ExportLine: Codable {
    case channel(ChatChannel)
    case message(ChatMessage)
    case user(ChatUser)

    enum Kind: String, Codable {
        case channel, message, user
    }

    private enum Keys: String, CodingKey {
        case kind
    }

    init(from decoder: any Decoder) throws {
        switch try decoder.container(keyedBy: Keys.self).decode(Kind.self, forKey: .kind) {
        case .channel: self = .channel(try ChatChannel(from: decoder))
        case .message: self = .message(try ChatMessage(from: decoder))
        case .user: self = .user(try ChatUser(from: decoder))
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
        }
    }
}
