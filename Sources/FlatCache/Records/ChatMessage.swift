/// A chat message, ready to cache: serialized as compact JSON with sorted keys.
///
/// ```swift
/// let message = ChatMessage(
///     messageID: 42, channelURL: "sendbird_group_channel_1", createdAt: 1_700_000_000_000,
///     sender: ChatUser(userID: "mina", nickname: "Mina"), text: "Hello 👋")
/// try cache.messages.save([message])
/// ```
public struct ChatMessage: MessageRecord, JSONCacheRecord, Hashable {
    /// The server's id; 0 for a message not sent yet (never cached).
    public var messageID: Int64
    /// The URL of the channel the message belongs to.
    public var channelURL: String
    /// Whether that channel is a group or an open channel.
    public var channelKind: ChatChannel.Kind
    /// When it was created, in milliseconds since 1970.
    public var createdAt: Int64
    /// When it was last edited, in milliseconds since 1970; 0 if never.
    public var updatedAt: Int64
    /// Who sent it; `nil` for an admin or system message.
    public var sender: ChatUser?
    /// The message text.
    public var text: String
    /// The app's own message category ("", "image", "poll", ...).
    public var customType: String
    /// Free-form app data, often JSON.
    public var data: String

    /// Whether ``channelKind`` is ``ChatChannel/Kind/group``.
    public var isInGroupChannel: Bool { channelKind == .group }

    /// A message with the given fields.
    public init(
        messageID: Int64, channelURL: String, channelKind: ChatChannel.Kind = .group,
        createdAt: Int64, updatedAt: Int64 = 0,
        sender: ChatUser? = nil, text: String, customType: String = "", data: String = ""
    ) {
        self.messageID = messageID
        self.channelURL = channelURL
        self.channelKind = channelKind
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.sender = sender
        self.text = text
        self.customType = customType
        self.data = data
    }
}
