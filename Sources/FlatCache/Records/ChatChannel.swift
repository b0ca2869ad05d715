public import Foundation

/// A chat channel, ready to cache in a compact binary form (see `docs/format.md`).
///
/// ```swift
/// let channel = ChatChannel(
///     channelURL: "sendbird_group_channel_1", kind: .group, name: "Hiking",
///     memberCount: 4, createdAt: 1_700_000_000_000)
/// try await cache.channels.save([channel])
/// ```
public struct ChatChannel: ChannelRecord, Codable, Hashable, Identifiable {
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
    /// How many members it has, as the server says; any `Int` is cached as it is.
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
    ///
    /// Every value reads back equal: ``memberCount`` may be any `Int`, negative included.
    ///
    /// ```swift
    /// let channel = ChatChannel(channelURL: "trip", kind: .group, name: "Trip", memberCount: 2, createdAt: 0)
    /// let bytes = try channel.serialize()
    /// let decoded = try ChatChannel(serializedData: bytes)   // == channel
    /// ```
    ///
    /// - Throws: ``RecordEncodingError`` when a string (the last message's
    ///   included) has more than 268,435,455 (2^28 - 1) UTF-8 bytes, the most
    ///   the format holds; nothing is copied then.
    public func serialize() throws(RecordEncodingError) -> Data {
        var writer = BinaryWriter(
            capacity: 32 + channelURL.utf8.count + name.utf8.count + coverURL.utf8.count
                + (lastMessage?.estimatedSize ?? 0))
        writer.write(Self.binaryVersion)
        try writer.write(channelURL, field: "channelURL")
        writer.write(kind.byte)
        try writer.write(name, field: "name")
        try writer.write(coverURL, field: "coverURL")
        writer.write(Int64(memberCount))
        writer.write(createdAt)
        writer.write(lastMessage != nil)
        if let lastMessage {
            do throws(RecordEncodingError) {
                try lastMessage.write(to: &writer)
            } catch {
                throw error.nested(in: "lastMessage")
            }
        }
        return writer.data
    }

    /// Decodes a channel from bytes that ``serialize()`` produced.
    ///
    /// A `memberCount` that does not fit in `Int` (on a 32-bit platform) is
    /// rejected; on 64-bit platforms every count decodes.
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
            guard let members = Int(exactly: memberCount) else {
                throw RecordDecodingError(reason: "member count \(memberCount) does not fit in Int on this platform")
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
