public import FlatCache
import Foundation

/// A stand-in for a chat server, answering from the sample data in `Data/`:
/// five group channels and one open channel, 320 messages (non-ASCII text,
/// edits, images) plus one unsent message, and ten users.
///
/// ```swift
/// let server = try SampleServer()
/// try cache.channels.replace(with: server.channels)
/// ```
public struct SampleServer: Sendable {
    /// Every channel, group and open, as the server lists them.
    public let channels: [ChatChannel]
    /// Every message of every channel, including one not sent yet (id 0).
    public let messages: [ChatMessage]
    /// Every user.
    public let users: [ChatUser]

    /// Loads the sample data bundled with this target.
    ///
    /// - Throws: `SampleServer.Error.missingResource` or a `DecodingError` when the data is damaged.
    public init() throws {
        channels = try Self.decode([ChatChannel].self, from: "channels")
        messages = try Self.decode([ChatMessage].self, from: "messages")
        users = try Self.decode([ChatUser].self, from: "users")
    }

    /// The messages of one channel, as the server's "list messages" call returns them.
    public func messages(in channelURL: String) -> [ChatMessage] {
        messages.filter { $0.channelURL == channelURL }
    }

    /// Why the sample data could not be loaded.
    public enum Error: Swift.Error, CustomStringConvertible {
        /// A data file is missing from the target's resource bundle.
        case missingResource(String)

        /// A sentence naming the missing file.
        public var description: String {
            switch self {
            case .missingResource(let name): "Sample data file Data/\(name).json is missing."
            }
        }
    }

    private static func decode<T: Decodable>(_ type: T.Type, from name: String) throws -> T {
        guard let url = Bundle.module.url(forResource: name, withExtension: "json", subdirectory: "Data") else {
            throw Error.missingResource(name)
        }
        return try JSONDecoder().decode(type, from: Data(contentsOf: url))
    }
}
