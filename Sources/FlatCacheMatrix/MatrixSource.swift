public import FlatCache

/// A Matrix account as FlatCache's sources: the messages of its rooms
/// (`MessageSource`), its joined rooms (`ChannelSource`) and
/// its users' profiles (`UserSource`), over the client-server API v3.
///
/// ```swift
/// let account = try await MatrixAccount.login(homeserver: homeserver, user: "mina", password: password)
/// let source = MatrixSource(client: account.client)
/// let cache = try ChatCache<MatrixMessage, MatrixRoom, ChatUser>(directory: folder)
/// let collection = try MessageCollection(channelURL: roomID, store: cache.messages, source: source)
/// ```
///
/// How the API maps onto the sources:
/// - Rooms are channels and `m.room.message` events are messages; an edit
///   (`rel_type: m.replace`) updates the message it edits, and a redaction
///   deletes the message it redacts. Edits and redacted messages are never
///   messages of their own.
/// - A page around a time starts at `/timestamp_to_event` and walks
///   `/messages` (`dir=b` or `dir=f`) from the `/context` token around that event.
/// - A change log token is a `/sync` `next_batch`. A change log is a `/sync`
///   from it, filtered to the room; a `limited` answer (a gap) is walked back
///   through `/messages` from its `prev_batch` to the token, up to
///   ``maxGapEvents`` events, beyond which the log says
///   `MessageChangeLog/tokenTooOld` and the collection reloads.
///   A token the server refuses is too old as well.
/// - Live events come from one long-polling `/sync` loop per source (shared
///   by its copies), whatever the number of listeners: the channel list and
///   every room collection read the same answers. It starts with the first
///   listener and stops when the last one goes; a listener that goes does
///   not stop the others. It retries with a growing pause when the network
///   fails, and a refused access token ends it and every listener's stream.
///   ``liveEvents()`` returns once the loop holds the `/sync` token to poll
///   from, so every event after its return comes. Give every collection of
///   an account the same source (or copies of it): another
///   `MatrixSource(client:)` runs a loop of its own.
/// - The channel list is the joined rooms, newest last message first.
public struct MatrixSource: MessageSource, ChannelSource, UserSource {
    /// The record type of messages: an `m.room.message` event.
    public typealias Message = MatrixMessage
    /// The record type of channels: a joined room.
    public typealias Channel = MatrixRoom
    /// The record type of users: a profile.
    public typealias User = ChatUser

    /// The client, with the account's access token.
    public let client: MatrixClient
    /// How many of a room's newest events a change log's `/sync` returns;
    /// more make its answer `limited`, and the rest is walked through
    /// `/messages`. 100 by default.
    public var changeLogTimelineLimit = 100
    /// The most events a change log walks in a `limited` sync before it says
    /// the token is too old; 1,000 by default.
    public var maxGapEvents = 1_000
    /// How long a live `/sync` waits on the server for news, in seconds; 30 by default.
    public var pollTimeout: Double = 30
    /// How far beyond a page's time the walk through `/messages` starts, in
    /// milliseconds, so that messages sharing a millisecond, or stored a
    /// little out of time order (sent at once), are never skipped; 100 by
    /// default. Raise it for rooms whose events come from servers with
    /// skewed clocks; each millisecond of it may cost events walked for nothing.
    public var timestampSlack: Int64 = 100
    /// The most requests one call makes while walking `/messages`; 1,000 by default.
    public var maxRequestsPerCall = 1_000

    /// Where the last walks through `/messages` stopped, shared by copies of this source.
    let resumes = WalkResumes()
    /// The one live `/sync` loop, shared by copies of this source.
    let live = LiveSubscription()
    /// The newest pages of a first sync, shared by copies of this source (see ``prefetchNewestPages(eventsPerRoom:)``).
    let prefetched = PrefetchedPages()

    /// A source for the account `client` is logged in as.
    ///
    /// - Parameter client: A client with an access token.
    public init(client: MatrixClient) {
        self.client = client
    }

    // MARK: - MessageSource

    /// Up to `limit` messages of the room before or after `timestamp`, oldest first:
    /// the `limit` nearest the time in the collection's order (time, then id),
    /// as `MessageSource/messages(in:_:_:limit:)` requires (within ``maxRequestsPerCall``).
    ///
    /// - Throws: ``MatrixError``.
    public func messages(
        in channelURL: String, _ direction: PageDirection, _ timestamp: Int64, limit: Int
    ) async throws -> MessagePage<MatrixMessage> {
        try await page(in: channelURL, direction, timestamp, limit: limit)
    }

    /// The `next_batch` of a `/sync` that asks for nothing: the account's
    /// state now; while a prefetch is fresh, its sync's `next_batch`, which
    /// matches the pages it answers (see ``prefetchNewestPages(eventsPerRoom:)``).
    ///
    /// - Throws: ``MatrixError``.
    public func changeLogToken(in channelURL: String) async throws -> String {
        try await currentSyncToken()
    }

    /// What changed in the room since `token` (see the type's description).
    ///
    /// - Throws: ``MatrixError``.
    public func changeLog(in channelURL: String, since token: String) async throws -> MessageChangeLog<MatrixMessage> {
        try await roomChangeLog(in: channelURL, since: token)
    }

    /// The account's live events from now on, from the source's one `/sync`
    /// loop (see the type's description): every room's, for each listener.
    public func liveEvents() async -> AsyncStream<LiveEvent<MatrixMessage>> {
        await live.messages(from: self)
    }

    // MARK: - ChannelSource

    /// A page of the joined rooms, newest last message first. The cursor is
    /// the offset into the list, which is read afresh at each call.
    ///
    /// - Throws: ``MatrixError``, or ``MatrixError/invalidArgument(_:)`` for a cursor this did not give.
    public func channels(from cursor: String?, limit: Int) async throws -> ChannelPage<MatrixRoom> {
        try await roomPage(from: cursor, limit: limit)
    }

    /// The account's `/sync` token now.
    ///
    /// - Throws: ``MatrixError``.
    public func channelChangeLogToken() async throws -> String {
        try await currentSyncToken()
    }

    /// The rooms joined or changed, and the rooms left, since `token`.
    ///
    /// - Throws: ``MatrixError``.
    public func channelChangeLog(since token: String) async throws -> ChannelChangeLog<MatrixRoom> {
        try await roomListChangeLog(since: token)
    }

    /// Rooms joined, changed and left, live, from the source's one `/sync`
    /// loop that ``liveEvents()`` shares.
    public func channelEvents() async -> AsyncStream<ChannelEvent<MatrixRoom>> {
        await live.channels(from: self)
    }

    // MARK: - UserSource

    /// The profiles (`/profile/{userId}`) of these users; users the server
    /// does not know, or will not show, are left out.
    ///
    /// - Throws: ``MatrixError``.
    public func users(withIDs userIDs: [String]) async throws -> [ChatUser] {
        try await profiles(of: userIDs)
    }
}
