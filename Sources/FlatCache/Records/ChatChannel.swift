public import Foundation

/// A chat channel, ready to cache in a compact binary form (see `docs/format.md`).
///
/// ```swift
/// let channel = ChatChannel(
///     channelURL: "sendbird_group_channel_1", kind: .group, name: "Hiking",
///     memberCount: 4, createdAt: 1_700_000_000_000)
/// try cache.channels.save([channel])
/// ```
public struct ChatChannel: ChannelRecord, Codable, Hashable {
    /// A group channel has members and history; an open channel is public and busy.
    public enum Kind: String, Codable, Sendable, Hashable {
        /// A channel with members and history: cached.
        case group
        /// A public channel anyone can join: never cached.
        case open
    }

    /// The channel's URL, its unique key.
    public var channelURL: String
    /// Group or open.
    public var kind: Kind
    /// The channel's display name.
    public var name: String
    /// The URL of the channel's picture; empty when there is none.
    public var coverURL: String
    /// How many members it has.
    public var memberCount: Int
    /// When it was created, in milliseconds since 1970.
    public var createdAt: Int64
    /// Its most recent message, shown in the channel list.
    public var lastMessage: ChatMessage?

    /// The JSON keys of the `Codable` form: `kind` is written `channelKind` (as in
    /// ``ChatMessage``), which leaves `kind` free for what a record is, as in
    /// the `flatcache export` format.
    enum CodingKeys: String, CodingKey {
        case channelURL, kind = "channelKind", name, coverURL, memberCount, createdAt, lastMessage
    }

    /// Whether ``kind`` is ``Kind/group``.
    public var isGroupChannel: Bool { kind == .group }

    /// The last message's creation time, or the channel's when it has none.
    public var lastMessageAt: Int64 { lastMessage?.createdAt ?? createdAt }

    /// A channel with the given fields.
    public init(
        channelURL: String, kind: Kind, name: String, coverURL: String = "",
        memberCount: Int, createdAt: Int64, lastMessage: ChatMessage? = nil
    ) {
        self.channelURL = channelURL
        self.kind = kind
        self.name = name
        self.coverURL = coverURL
        self.memberCount = memberCount
        self.createdAt = createdAt
        self.lastMessage = lastMessage
    }
}

extension ChatChannel {
    /// The record format version ``serialize()`` writes.
    static let binaryVersion: UInt8 = 1

    /// The channel's bytes: a version byte, `channelURL`, `kind`, `name`, `coverURL`,
    /// `memberCount`, `createdAt`, then the last message (a flag, then the message's own bytes).
    public func serialize() -> Data {
        var writer = BinaryWriter(
            capacity: 32 + channelURL.utf8.count + name.utf8.count + coverURL.utf8.count
                + (lastMessage?.estimatedSize ?? 0))
        writer.write(Self.binaryVersion)
        writer.write(channelURL)
        writer.write(kind.byte)
        writer.write(name)
        writer.write(coverURL)
        writer.write(Int64(memberCount))
        writer.write(createdAt)
        writer.write(lastMessage != nil)
        lastMessage?.write(to: &writer)
        return writer.data
    }

    /// Decodes a channel from bytes that ``serialize()`` produced.
    ///
    /// - Throws: ``RecordDecodingError`` for anything else.
    public init(serializedData: Data) throws(RecordDecodingError) {
        self = try BinaryReader.read(serializedData) { reader throws(RecordDecodingError) in
            try reader.readVersion(Self.binaryVersion, of: "ChatChannel")
            let channelURL = try reader.readString()
            let kind = try Kind(byte: try reader.readByte())
            let name = try reader.readString()
            let coverURL = try reader.readString()
            let memberCount = try reader.readInt64()
            guard let members = Int(exactly: memberCount), members >= 0 else {
                throw RecordDecodingError(reason: "member count \(memberCount) is out of range")
            }
            let createdAt = try reader.readInt64()
            let lastMessage = try reader.readBool() ? try ChatMessage(reading: &reader) : nil
            return ChatChannel(
                channelURL: channelURL, kind: kind, name: name, coverURL: coverURL,
                memberCount: members, createdAt: createdAt, lastMessage: lastMessage)
        }
    }
}

extension ChatChannel.Kind {
    /// 0 for group, 1 for open.
    var byte: UInt8 { self == .group ? 0 : 1 }

    init(byte: UInt8) throws(RecordDecodingError) {
        switch byte {
        case 0: self = .group
        case 1: self = .open
        default: throw RecordDecodingError(reason: "\(byte) is not a channel kind (0 group, 1 open)")
        }
    }
}
