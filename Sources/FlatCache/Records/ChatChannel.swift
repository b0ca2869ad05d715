/// A chat channel, ready to cache: serialized as compact JSON with sorted keys.
///
/// ```swift
/// let channel = ChatChannel(
///     channelURL: "sendbird_group_channel_1", kind: .group, name: "Hiking",
///     memberCount: 4, createdAt: 1_700_000_000_000)
/// try cache.channels.save([channel])
/// ```
public struct ChatChannel: ChannelRecord, JSONCacheRecord, Hashable {
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
