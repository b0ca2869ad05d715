/// The record types a cache folder holds: one name each for its messages,
/// channels and users (``CacheRecord/recordTypeName``).
///
/// A folder records them in its `records` file on first open, and opening it
/// with other types throws ``FlatCacheError/recordTypeMismatch(directory:cached:requested:)``.
///
/// ```swift
/// do {
///     _ = try ChatCache<SDKMessage, SDKChannel, SDKUser>(directory: folder)
/// } catch FlatCacheError.recordTypeMismatch(_, let cached, _) {
///     print("this folder holds", cached.messages)
/// }
/// ```
public struct RecordTypes: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The message type's name.
    public var messages: String
    /// The channel type's name.
    public var channels: String
    /// The user type's name.
    public var users: String

    /// The record types with these names.
    ///
    /// - Parameters:
    ///   - messages: The message type's name.
    ///   - channels: The channel type's name.
    ///   - users: The user type's name.
    public init(messages: String, channels: String, users: String) {
        self.messages = messages
        self.channels = channels
        self.users = users
    }

    /// The names of these three record types.
    ///
    /// - Parameters:
    ///   - message: The message type.
    ///   - channel: The channel type.
    ///   - user: The user type.
    public init<Message: MessageRecord, Channel: ChannelRecord, User: UserRecord>(
        _ message: Message.Type, _ channel: Channel.Type, _ user: User.Type
    ) {
        self.init(messages: Message.recordTypeName, channels: Channel.recordTypeName, users: User.recordTypeName)
    }

    /// "messages A, channels B, users C".
    public var description: String {
        "messages \(messages), channels \(channels), users \(users)"
    }
}
