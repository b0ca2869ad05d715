/// What an app implements over its chat server for a channel's messages:
/// pages around a time, the channel's change log since a token, and live
/// events. Every call is `async` and may throw; a caller reports a throw as
/// ``FlatCacheError/sourceFailed(operation:underlying:)`` and leaves the
/// cache as it was.
///
/// `SimulatedChatServer` (in the `FlatCacheTesting` library) implements it for tests and demos.
public protocol MessageSource<Message>: Sendable {
    /// The message record type the source returns.
    associatedtype Message: MessageRecord

    /// Up to `limit` messages of the channel just before (older than) or
    /// just after (newer than) `timestamp`, oldest first, and whether more
    /// exist beyond them in that direction.
    ///
    /// The contract a collection relies on: the page holds the `limit`
    /// messages nearest to `timestamp` on that side (all of them when there
    /// are fewer), so no message left out is nearer to `timestamp` than one
    /// returned; `hasMore` is `true` exactly when messages exist beyond those
    /// returned. Within one millisecond the order and the choice are the
    /// source's own (a full page may stop partway through its farthest
    /// millisecond), and a page may hold more than `limit` (a whole
    /// millisecond). A source honours any `limit`: a server with a smaller
    /// page size walks several of its own pages for one call.
    ///
    /// Because a page keyed by time alone cannot say which messages of its
    /// farthest millisecond it left out, a ``MessageCollection`` treats only
    /// the milliseconds nearer than that one as complete, and asks again
    /// with a larger limit when a whole page shares one millisecond: so
    /// messages that share a millisecond, however many, are never skipped.
    ///
    /// - Parameters:
    ///   - channelURL: The channel.
    ///   - direction: ``PageDirection/before`` or ``PageDirection/after`` the time.
    ///   - timestamp: Milliseconds since 1970; messages at exactly this time are not included.
    ///   - limit: At least 1.
    /// - Returns: The page.
    /// - Throws: Whatever the server or the network throws.
    func messages(
        in channelURL: String, _ direction: PageDirection, _ timestamp: Int64, limit: Int
    ) async throws -> MessagePage<Message>

    /// The token that names the channel's state now: a change log asked
    /// for with it lists what changes after this call.
    ///
    /// - Parameter channelURL: The channel.
    /// - Returns: An opaque token.
    /// - Throws: Whatever the server or the network throws.
    func changeLogToken(in channelURL: String) async throws -> String

    /// What changed in the channel since `token`: messages updated (edited,
    /// or added) and ids deleted, a page at a time; or that the token is too
    /// old for the server to tell, and the channel must be loaded afresh.
    ///
    /// - Parameters:
    ///   - channelURL: The channel.
    ///   - token: From ``changeLogToken(in:)`` or an earlier change log.
    /// - Returns: The change log.
    /// - Throws: Whatever the server or the network throws.
    func changeLog(in channelURL: String, since token: String) async throws -> MessageChangeLog<Message>

    /// Live events as they happen on the server from the moment this
    /// returns, for as long as the stream is iterated; events that happen
    /// while the app is not connected are not in it (a change log finds them).
    ///
    /// Return only once the subscription is open (a socket connected, a
    /// first sync token taken): ``MessageCollection/start()`` asks the
    /// server for what it missed after this returns, so an event between the
    /// return and the subscription opening would be lost until a later sync.
    /// When the subscription cannot open (the network is down), return the
    /// stream anyway and keep trying; the collection's sync fails and is retried.
    ///
    /// Every ``MessageCollection`` calls this, one for each open channel, and
    /// ``ChannelSource/channelEvents()`` asks for the same account's news: a
    /// source serving many collections should share one subscription (one
    /// socket, one long poll) among all its listeners, opened with the first
    /// and closed when the last stream ends, rather than open one per call.
    /// A listener that ends must not end the others.
    func liveEvents() async -> AsyncStream<LiveEvent<Message>>
}

/// Which side of a time a page of messages is on.
public enum PageDirection: Sendable, Hashable {
    /// Older than the time.
    case before
    /// Newer than the time.
    case after
}

/// A page of a channel's messages from a ``MessageSource``.
public struct MessagePage<Message: MessageRecord>: Sendable {
    /// The messages, oldest first.
    public var messages: [Message]
    /// Whether more messages exist beyond these in the page's direction.
    public var hasMore: Bool

    /// A page of `messages`.
    ///
    /// - Parameters:
    ///   - messages: Oldest first.
    ///   - hasMore: Whether more exist beyond them.
    public init(messages: [Message], hasMore: Bool) {
        self.messages = messages
        self.hasMore = hasMore
    }
}

/// What changed in a channel since a token (see ``MessageSource/changeLog(in:since:)``).
public enum MessageChangeLog<Message: MessageRecord>: Sendable {
    /// Messages updated or added, ids deleted, the token to ask with next,
    /// and whether more changes wait behind that token now.
    case changes(updated: [Message], deleted: [Message.MessageID], next: String, hasMore: Bool)
    /// The server no longer knows what changed since the token: load the channel afresh.
    case tokenTooOld
}

/// Something that happened on the server, as a ``MessageSource`` streams it.
public enum LiveEvent<Message: MessageRecord>: Sendable {
    /// A new message.
    case messageAdded(Message)
    /// A message changed (an edit); it replaces the one with its id.
    case messageUpdated(Message)
    /// A message was deleted.
    case messageDeleted(Message.MessageID, channelURL: String)
    /// A channel's own data changed (its name, its cover): reload it from the channel list.
    case channelUpdated(channelURL: String)
    /// A channel was deleted, or the user left it: its messages go.
    case channelDeleted(channelURL: String)
}
