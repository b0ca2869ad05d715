import FlatCache
import Foundation

/// A record that is already bytes: FlatCache's engine cost without any record codec.
///
/// Its bytes are a 16-byte header (message id and creation time, little-endian)
/// followed by a `ChatMessage`'s own serialization, so the files hold the same
/// volume as the real ones. Decoding reads the header and keeps the bytes.
package struct RawMessage: MessageRecord {
    package let messageID: Int64
    package let createdAt: Int64
    package let channelURL: String
    package let bytes: Data

    struct TooShort: Error {}

    package init(_ message: ChatMessage) throws {
        var header = Data(count: 16)
        header.withUnsafeMutableBytes { buffer in
            buffer.storeBytes(of: message.messageID.littleEndian, toByteOffset: 0, as: Int64.self)
            buffer.storeBytes(of: message.createdAt.littleEndian, toByteOffset: 8, as: Int64.self)
        }
        messageID = message.messageID
        createdAt = message.createdAt
        channelURL = message.channelURL
        bytes = header + (try message.serialize())
    }

    package func serialize() -> Data { bytes }

    package init(serializedData: Data) throws {
        guard serializedData.count >= 16 else { throw TooShort() }
        (messageID, createdAt) = serializedData.withUnsafeBytes { buffer in
            (Int64(littleEndian: buffer.loadUnaligned(fromByteOffset: 0, as: Int64.self)),
             Int64(littleEndian: buffer.loadUnaligned(fromByteOffset: 8, as: Int64.self)))
        }
        channelURL = ""  // not needed to load or re-save
        bytes = serializedData
    }
}

/// FlatCache's engine on `RawMessage`s: load every channel, and re-save unchanged.
package final class RawEngineSystem {
    private let cache: ChatCache<RawMessage, ChatChannel, ChatUser>
    private let channels: [(url: String, messages: [RawMessage])]

    package init(folder: URL, workload: Workload) throws {
        // No memory tier: every load reads its file, the disk work this system measures.
        cache = try ChatCache(
            directory: folder, configuration: Configuration(maxMessagesPerChannel: 1_000_000, memoryLimit: 0))
        channels = try zip(workload.channelURLs, workload.messages).map { url, messages in
            (url, try messages.map { try RawMessage($0) })
        }
    }

    package func saveEverything() throws {
        for channel in channels { try cache.messages.blocking.replace(channel.messages, in: channel.url) }
    }

    package func loadEveryChannel() throws -> Int {
        try channels.reduce(0) { $0 + (try cache.messages.blocking.load(in: $1.url).count) }
    }
}
