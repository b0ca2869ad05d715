/// What an app implements over its chat server for the user's channel
/// list: the channels a page at a time, the list's change log since a
/// token, and live events. A caller reports a throw as
/// ``FlatCacheError/sourceFailed(operation:underlying:)`` and leaves the
/// cache as it was.
///
/// `SimulatedChatServer` (in the `FlatCacheTesting` library) implements it for tests and demos.
public protocol ChannelSource<Channel>: Sendable {
    /// The channel record type the source returns.
    associatedtype Channel: ChannelRecord

    /// A page of the user's channels, most recent last message first.
    ///
    /// - Parameters:
    ///   - cursor: `nil` for the first page, else the ``ChannelPage/next`` of the page before.
    ///   - limit: At least 1.
    /// - Returns: The page.
    /// - Throws: Whatever the server or the network throws.
    func channels(from cursor: String?, limit: Int) async throws -> ChannelPage<Channel>

    /// The token that names the channel list's state now.
    ///
    /// - Returns: An opaque token.
    /// - Throws: Whatever the server or the network throws.
    func channelChangeLogToken() async throws -> String

    /// What changed in the user's channel list since `token`: channels
    /// added or updated, and channels removed (left or deleted), a page at a
    /// time; or that the token is too old, and the list must be loaded afresh.
    ///
    /// - Parameter token: From ``channelChangeLogToken()`` or an earlier change log.
    /// - Returns: The change log.
    /// - Throws: Whatever the server or the network throws.
    func channelChangeLog(since token: String) async throws -> ChannelChangeLog<Channel>

    /// Live changes to the user's channel list from the moment this
    /// returns, while connected.
    ///
    /// Return only once the subscription is open (a socket connected, a
    /// first sync token taken): ``ChannelListCollection/start()`` asks the
    /// server for what it missed after this returns, so a change between the
    /// return and the subscription opening would be lost until a later sync.
    /// When the subscription cannot open (the network is down), return the
    /// stream anyway and keep trying; the collection's sync fails and is retried.
    ///
    /// A source that is also a ``MessageSource`` for many collections should
    /// serve this from the same one subscription as their
    /// ``MessageSource/liveEvents()`` (one socket, one long poll for the
    /// account), opened with the first listener and closed with the last.
    func channelEvents() async -> AsyncStream<ChannelEvent<Channel>>
}

/// A page of the user's channels from a ``ChannelSource``.
public struct ChannelPage<Channel: ChannelRecord>: Sendable {
    /// The channels, most recent last message first.
    public var channels: [Channel]
    /// The cursor of the next page; `nil` when this is the last.
    public var next: String?

    /// A page of `channels`.
    ///
    /// - Parameters:
    ///   - channels: Most recent last message first.
    ///   - next: The next page's cursor, or `nil`.
    public init(channels: [Channel], next: String?) {
        self.channels = channels
        self.next = next
    }
}

/// What changed in the user's channel list since a token (see ``ChannelSource/channelChangeLog(since:)``).
public enum ChannelChangeLog<Channel: ChannelRecord>: Sendable {
    /// Channels added or updated, URLs of channels removed, the token to ask
    /// with next, and whether more changes wait behind it now.
    case changes(updated: [Channel], removed: [String], next: String, hasMore: Bool)
    /// The server no longer knows what changed since the token: load the list afresh.
    case tokenTooOld
}

/// A live change to the user's channel list.
public enum ChannelEvent<Channel: ChannelRecord>: Sendable {
    /// A channel joined, changed, or moved up by a new message.
    case updated(Channel)
    /// A channel left or deleted.
    case removed(channelURL: String)
}
