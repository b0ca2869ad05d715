public import FlatCache

/// An in-memory chat server for tests and demos, scriptable like a bad
/// network: it can go offline, fail the next calls, and answer slowly. It
/// implements the sources an app implements over its own server
/// (`UserSource`, `MessageSource` and `ChannelSource`), so that what
/// is tested against it is what runs against a real one.
///
/// Messages are kept per channel, oldest first. Every change (a message
/// sent, edited or deleted) gets the next number in one sequence; a change
/// log token is such a number, and the server keeps the last
/// ``changeLogRetention`` changes, after which older tokens are too old.
/// The user's channel list has a sequence of its own, kept the same way: a
/// channel added, updated, moved up by a message sent to it, left or deleted.
/// While offline, calls throw and live events are not delivered (the client
/// is not connected to hear them).
///
/// As a `MessageSender` it makes each message once per request id, and
/// can lose an answer after acting, refuse a message for good, or rate limit.
///
/// ```swift
/// let server = SimulatedChatServer()
/// await server.add(users: [ChatUser(userID: "mina", nickname: "Mina", profileURL: "")])
/// await server.send([ChatMessage(messageID: 1, channelURL: "trip", createdAt: 1_000, text: "Hi")])
/// await server.failNextCalls(1)                  // the next call throws
/// let directory = UserDirectory(users: cache.users, source: server)
/// ```
public actor SimulatedChatServer: UserSource, MessageSource, ChannelSource, MessageSender {
    /// Why a call to the simulated server failed.
    public enum Failure: Error, Sendable, Hashable, CustomStringConvertible {
        /// The server was set offline (``setOffline(_:)``).
        case offline
        /// A failure scripted with ``failNextCalls(_:)``.
        case scripted(call: String)
        /// A change log token the server never handed out.
        case badToken(String)

        /// Such as `the simulated server is offline`.
        public var description: String {
            switch self {
            case .offline: "the simulated server is offline"
            case .scripted(let call): "the simulated server failed \(call), as scripted"
            case .badToken(let token): "the simulated server never handed out the change log token '\(token)'"
            }
        }
    }

    /// A call the server answered or refused, for tests to check what was asked.
    public enum Call: Sendable, Hashable {
        /// ``users(withIDs:)`` with these ids.
        case users([String])
        /// ``messages(in:_:_:limit:)``.
        case messages(channelURL: String, PageDirection, Int64, limit: Int)
        /// ``changeLogToken(in:)``.
        case changeLogToken(channelURL: String)
        /// ``changeLog(in:since:)``.
        case changeLog(channelURL: String, since: String)
        /// ``channels(from:limit:)``.
        case channels(from: String?, limit: Int)
        /// ``channelChangeLogToken()``.
        case channelChangeLogToken
        /// ``channelChangeLog(since:)``.
        case channelChangeLog(since: String)
        /// ``send(_:requestID:)``.
        case send(channelURL: String, requestID: String)
    }

    /// The changes to one list of things, numbered: messages (by id) or the channel list (by URL).
    private struct ChangeSequence<Key: Hashable> {
        private(set) var changes = [(sequence: Int, channelURL: String, key: Key, removed: Bool)]()
        private(set) var current = 0
        /// The highest number no longer kept: tokens below it are too old.
        private(set) var forgottenThrough = 0

        mutating func record(_ channelURL: String, _ key: Key, removed: Bool, keeping retention: Int) {
            current += 1
            changes.append((current, channelURL, key, removed))
            forget(keeping: retention)
        }

        mutating func forget(keeping retention: Int) {
            guard changes.count > retention else { return }
            let dropped = changes.count - retention
            forgottenThrough = changes[dropped - 1].sequence
            changes.removeFirst(dropped)
        }

        /// The changes after `token` in `channelURL` (any channel when `nil`),
        /// up to `pageSize`: for each key its last change in the page, the
        /// next token, and whether more wait; `nil` when the token is too old.
        func since(
            _ token: String, in channelURL: String?, pageSize: Int
        ) throws -> (last: [Key: Bool], next: String, hasMore: Bool)? {
            guard let start = Int(token), start >= 0, start <= current else { throw Failure.badToken(token) }
            guard start >= forgottenThrough else { return nil }
            let pending = changes.filter { $0.sequence > start && (channelURL == nil || $0.channelURL == channelURL) }
            let page = pending.prefix(pageSize)
            var last = [Key: Bool]()
            for change in page { last[change.key] = change.removed }
            let hasMore = pending.count > page.count
            return (last, String(hasMore ? page.last!.sequence : current), hasMore)
        }
    }


    private var usersByID = [String: ChatUser]()
    private var messagesByChannel = [String: [ChatMessage]]()
    private var messageChanges = ChangeSequence<Int64>()
    /// The user's channels, by URL.
    private var channelsByURL = [String: ChatChannel]()
    private var channelChanges = ChangeSequence<String>()
    private var messageListeners = Listeners<LiveEvent<ChatMessage>>()
    private var channelListeners = Listeners<ChannelEvent<ChatChannel>>()
    /// How many changes the server remembers for change logs (all channels together).
    public private(set) var changeLogRetention = 1_000
    /// The most changes one change log answer holds; more wait behind its token.
    public private(set) var changeLogPageSize = 100
    private var isOffline = false
    private var failuresToCome = 0
    private var latency = Duration.zero
    /// Every call so far, in order, answered or not.
    public private(set) var calls = [Call]()
    /// The messages ``send(_:requestID:)`` made, by request id.
    var sentByRequestID = [String: ChatMessage]()
    /// The highest message id the server holds or held.
    var highestMessageID: Int64 = 0
    /// Scripted send failures to come (see the `SimulatedChatServer+Sending` scripting).
    var sendScript = SendScript()
    /// Where ``send(_:requestID:)`` takes the time of the messages it makes.
    var clock = CacheClock.system

    /// An empty server, online, answering at once.
    public init() {}

    // MARK: - Scripting

    /// Adds users, or replaces those with the same ids (a profile change).
    public func add(users: some Sequence<ChatUser>) {
        for user in users { usersByID[user.userID] = user }
    }

    /// Removes the users with these ids (deleted accounts).
    public func remove(userIDs: some Sequence<String>) {
        for id in userIDs { usersByID[id] = nil }
    }

    /// Sends messages, or replaces those with the same ids: each is a change
    /// (for change logs) and a live `LiveEvent/messageAdded(_:)`, or
    /// `LiveEvent/messageUpdated(_:)` for an id the channel had.
    public func send(_ messages: some Sequence<ChatMessage>) {
        for message in messages {
            highestMessageID = max(highestMessageID, message.messageID)
            var channel = messagesByChannel[message.channelURL] ?? []
            let existed = channel.firstIndex { $0.messageID == message.messageID }
            if let existed { channel.remove(at: existed) }
            let position = channel.firstIndex { CanonicalOrder.precedes(message, $0) } ?? channel.endIndex
            channel.insert(message, at: position)
            messagesByChannel[message.channelURL] = channel
            messageChanges.record(message.channelURL, message.messageID, removed: false, keeping: changeLogRetention)
            publish(existed == nil ? .messageAdded(message) : .messageUpdated(message))
            // A channel of the user's list moves up with its new last message.
            if var listed = channelsByURL[message.channelURL],
                listed.lastMessage.map({ CanonicalOrder.precedes($0, message) || $0.messageID == message.messageID }) ?? true
            {
                listed.lastMessage = message
                list(listed)
            }
        }
    }

    /// Adds channels to the user's list, or replaces those with the same
    /// URLs: each a channel change, a live `ChannelEvent/updated(_:)`, and
    /// a live `LiveEvent/channelUpdated(channelURL:)` for its message collections.
    public func update(channels: some Sequence<ChatChannel>) {
        for channel in channels {
            list(channel)
            publish(LiveEvent<ChatMessage>.channelUpdated(channelURL: channel.channelURL))
        }
    }

    /// Puts `channel` on the user's list: a channel change and a live `ChannelEvent/updated(_:)`.
    private func list(_ channel: ChatChannel) {
        channelsByURL[channel.channelURL] = channel
        channelChanges.record(channel.channelURL, channel.channelURL, removed: false, keeping: changeLogRetention)
        publish(ChannelEvent.updated(channel))
    }

    /// Takes a channel off the user's list (the user left it): a channel
    /// change and a live `ChannelEvent/removed(channelURL:)`. Its messages stay on the server.
    public func leave(channelURL: String) {
        guard channelsByURL.removeValue(forKey: channelURL) != nil else { return }
        channelChanges.record(channelURL, channelURL, removed: true, keeping: changeLogRetention)
        publish(.removed(channelURL: channelURL))
    }

    /// The user's channels as the server has them, most recent last message first.
    public func channelList() -> [ChatChannel] {
        CanonicalOrder.channels(Array(channelsByURL.values))
    }

    /// Edits a message's text (its `updatedAt` becomes `updatedAt`); `false` when there is no such message.
    @discardableResult
    public func edit(messageID: Int64, in channelURL: String, text: String, updatedAt: Int64) -> Bool {
        guard var message = messagesByChannel[channelURL]?.first(where: { $0.messageID == messageID }) else { return false }
        message.text = text
        message.updatedAt = updatedAt
        send([message])
        return true
    }

    /// Deletes a message; `false` when there is no such message.
    @discardableResult
    public func delete(messageID: Int64, in channelURL: String) -> Bool {
        guard let index = messagesByChannel[channelURL]?.firstIndex(where: { $0.messageID == messageID }) else { return false }
        messagesByChannel[channelURL]?.remove(at: index)
        messageChanges.record(channelURL, messageID, removed: true, keeping: changeLogRetention)
        publish(.messageDeleted(messageID, channelURL: channelURL))
        return true
    }

    /// Deletes a channel and its messages: a live `LiveEvent/channelDeleted(channelURL:)`,
    /// and, when it is on the user's list, as ``leave(channelURL:)`` does.
    public func deleteChannel(_ channelURL: String) {
        for message in messagesByChannel[channelURL] ?? [] {
            messageChanges.record(channelURL, message.messageID, removed: true, keeping: changeLogRetention)
        }
        messagesByChannel[channelURL] = nil
        publish(.channelDeleted(channelURL: channelURL))
        leave(channelURL: channelURL)
    }

    /// The channel's messages as the server has them, oldest first.
    public func messages(in channelURL: String) -> [ChatMessage] {
        messagesByChannel[channelURL] ?? []
    }

    /// Sets how many changes the server remembers (older tokens become too
    /// old) and how many one change log answer holds; both at least 1.
    public func setChangeLogLimits(retention: Int, pageSize: Int) {
        changeLogRetention = max(1, retention)
        changeLogPageSize = max(1, pageSize)
        messageChanges.forget(keeping: changeLogRetention)
        channelChanges.forget(keeping: changeLogRetention)
    }

    /// Takes the server off the network (`true`) or back: while offline,
    /// every call throws ``Failure/offline``.
    public func setOffline(_ offline: Bool) {
        isOffline = offline
    }

    /// Makes the next `count` calls throw ``Failure/scripted(call:)``.
    public func failNextCalls(_ count: Int) {
        failuresToCome = max(0, count)
    }

    /// Makes every call take `latency` before it answers (or fails); it
    /// respects cancellation.
    public func setLatency(_ latency: Duration) {
        self.latency = latency
    }

    // MARK: - Sources

    /// The users with these ids that the server has (see `UserSource`).
    public func users(withIDs userIDs: [String]) async throws -> [ChatUser] {
        try await answer(.users(userIDs))
        return userIDs.compactMap { usersByID[$0] }
    }

    /// A page of the channel's messages (see `MessageSource`): the `limit`
    /// nearest the time in the collection's order (time, then id), so a full
    /// page may stop partway through a millisecond, as the protocol allows.
    public func messages(
        in channelURL: String, _ direction: PageDirection, _ timestamp: Int64, limit: Int
    ) async throws -> MessagePage<ChatMessage> {
        try await answer(.messages(channelURL: channelURL, direction, timestamp, limit: limit))
        let all = messagesByChannel[channelURL] ?? []
        let limit = max(1, limit)
        switch direction {
        case .before:
            let older = all.prefix { $0.createdAt < timestamp }
            return MessagePage(messages: Array(older.suffix(limit)), hasMore: older.count > limit)
        case .after:
            let newer = all.drop { $0.createdAt <= timestamp }
            return MessagePage(messages: Array(newer.prefix(limit)), hasMore: newer.count > limit)
        }
    }

    /// The current point of the change sequence (see `MessageSource`).
    public func changeLogToken(in channelURL: String) async throws -> String {
        try await answer(.changeLogToken(channelURL: channelURL))
        return String(messageChanges.current)
    }

    /// The channel's changes since `token`, up to ``changeLogPageSize`` (see `MessageSource`).
    public func changeLog(in channelURL: String, since token: String) async throws -> MessageChangeLog<ChatMessage> {
        try await answer(.changeLog(channelURL: channelURL, since: token))
        guard let (last, next, hasMore) = try messageChanges.since(token, in: channelURL, pageSize: changeLogPageSize)
        else { return .tokenTooOld }
        // The last change of each message in the page decides: updated (as it is now) or deleted.
        let updated = (messagesByChannel[channelURL] ?? []).filter { last[$0.messageID] == false }
        let deleted = last.filter { $0.value }.keys.sorted()
        return .changes(updated: updated, deleted: deleted, next: next, hasMore: hasMore)
    }

    /// A page of the user's channels (see `ChannelSource`); the cursor is the index of the page's first channel.
    public func channels(from cursor: String?, limit: Int) async throws -> ChannelPage<ChatChannel> {
        try await answer(.channels(from: cursor, limit: limit))
        let all = channelList()
        guard let start = cursor.map({ Int($0) }) ?? 0, start >= 0, start <= all.count else {
            throw Failure.badToken(cursor ?? "")
        }
        let end = min(all.count, start + max(1, limit))
        return ChannelPage(channels: Array(all[start..<end]), next: end < all.count ? String(end) : nil)
    }

    /// The current point of the channel list's change sequence (see `ChannelSource`).
    public func channelChangeLogToken() async throws -> String {
        try await answer(.channelChangeLogToken)
        return String(channelChanges.current)
    }

    /// The channel list's changes since `token`, up to ``changeLogPageSize`` (see `ChannelSource`).
    public func channelChangeLog(since token: String) async throws -> ChannelChangeLog<ChatChannel> {
        try await answer(.channelChangeLog(since: token))
        guard let (last, next, hasMore) = try channelChanges.since(token, in: nil, pageSize: changeLogPageSize)
        else { return .tokenTooOld }
        let updated = channelList().filter { last[$0.channelURL] == false }
        let removed = last.filter { $0.value }.keys.sorted()
        return .changes(updated: updated, removed: removed, next: next, hasMore: hasMore)
    }

    /// Live changes to the user's channel list from now on, while online (see `ChannelSource`).
    public func channelEvents() async -> AsyncStream<ChannelEvent<ChatChannel>> {
        let (id, stream) = channelListeners.add()
        stream.continuation.onTermination = { _ in Task { await self.stopChannelEvents(id) } }
        return stream.stream
    }

    /// Live events from now on, while online (see `MessageSource`).
    public func liveEvents() async -> AsyncStream<LiveEvent<ChatMessage>> {
        let (id, stream) = messageListeners.add()
        stream.continuation.onTermination = { _ in Task { await self.stopLiveEvents(id) } }
        return stream.stream
    }

    /// How many live subscriptions are open now: streams from
    /// ``liveEvents()`` and ``channelEvents()`` not yet ended (finished,
    /// dropped, or their iterating task cancelled). A test can check with it
    /// that collections share, or close, their subscriptions.
    public var openLiveSubscriptions: Int { messageListeners.count + channelListeners.count }

    private func stopLiveEvents(_ id: Int) { messageListeners.remove(id) }
    private func stopChannelEvents(_ id: Int) { channelListeners.remove(id) }

    /// Delivers `event` to every subscriber, unless offline.
    private func publish(_ event: LiveEvent<ChatMessage>) {
        if !isOffline { messageListeners.yield(event) }
    }

    /// Delivers `event` to every channel list subscriber, unless offline.
    private func publish(_ event: ChannelEvent<ChatChannel>) {
        if !isOffline { channelListeners.yield(event) }
    }

    /// The streams of one kind of live event, by subscriber.
    private struct Listeners<Event: Sendable> {
        private var continuations = [Int: AsyncStream<Event>.Continuation]()
        private var next = 0

        mutating func add() -> (id: Int, stream: (stream: AsyncStream<Event>, continuation: AsyncStream<Event>.Continuation)) {
            let made = AsyncStream.makeStream(of: Event.self)
            next += 1
            continuations[next] = made.continuation
            return (next, made)
        }

        mutating func remove(_ id: Int) { continuations[id] = nil }

        var count: Int { continuations.count }

        func yield(_ event: Event) {
            for continuation in continuations.values { continuation.yield(event) }
        }
    }

    /// Records `call`, waits the latency, then fails it when offline or scripted to.
    func answer(_ call: Call) async throws {
        calls.append(call)
        if latency > .zero { try await Task.sleep(for: latency) }
        if isOffline { throw Failure.offline }
        if failuresToCome > 0 {
            failuresToCome -= 1
            throw Failure.scripted(call: "\(call)")
        }
    }
}
