/// An in-memory chat server for tests and demos, scriptable like a bad
/// network: it can go offline, fail the next calls, and answer slowly. It
/// implements the sources an app implements over its own server
/// (``UserSource`` and ``MessageSource``), so that what is tested against it
/// is what runs against a real one.
///
/// Messages are kept per channel, oldest first. Every change (a message
/// sent, edited or deleted) gets the next number in one sequence; a change
/// log token is such a number, and the server keeps the last
/// ``changeLogRetention`` changes, after which older tokens are too old.
/// While offline, calls throw and live events are not delivered (the client
/// is not connected to hear them).
///
/// ```swift
/// let server = SimulatedChatServer()
/// await server.add(users: [ChatUser(userID: "mina", nickname: "Mina", profileURL: "")])
/// await server.send([ChatMessage(messageID: 1, channelURL: "trip", createdAt: 1_000, text: "Hi")])
/// await server.failNextCalls(1)                  // the next call throws
/// let directory = UserDirectory(users: cache.users, source: server)
/// ```
public actor SimulatedChatServer: UserSource, MessageSource {
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
    }

    /// One change in the sequence: which message of which channel.
    private struct Change {
        let sequence: Int
        let channelURL: String
        let messageID: Int64
        let deleted: Bool
    }

    private var usersByID = [String: ChatUser]()
    private var messagesByChannel = [String: [ChatMessage]]()
    private var changes = [Change]()
    private var sequence = 0
    /// The highest sequence number no longer kept: tokens below it are too old.
    private var forgottenThrough = 0
    private var subscribers = [Int: AsyncStream<LiveEvent<ChatMessage>>.Continuation]()
    private var nextSubscriber = 0
    /// How many changes the server remembers for change logs (all channels together).
    public private(set) var changeLogRetention = 1_000
    /// The most changes one change log answer holds; more wait behind its token.
    public private(set) var changeLogPageSize = 100
    private var isOffline = false
    private var failuresToCome = 0
    private var latency = Duration.zero
    /// Every call so far, in order, answered or not.
    public private(set) var calls = [Call]()

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
    /// (for change logs) and a live ``LiveEvent/messageAdded(_:)``, or
    /// ``LiveEvent/messageUpdated(_:)`` for an id the channel had.
    public func send(_ messages: some Sequence<ChatMessage>) {
        for message in messages {
            var channel = messagesByChannel[message.channelURL] ?? []
            let existed = channel.firstIndex { $0.messageID == message.messageID }
            if let existed { channel.remove(at: existed) }
            let position = channel.firstIndex { CanonicalOrder.precedes(message, $0) } ?? channel.endIndex
            channel.insert(message, at: position)
            messagesByChannel[message.channelURL] = channel
            record(message.channelURL, message.messageID, deleted: false)
            publish(existed == nil ? .messageAdded(message) : .messageUpdated(message))
        }
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
        record(channelURL, messageID, deleted: true)
        publish(.messageDeleted(messageID, channelURL: channelURL))
        return true
    }

    /// Deletes a channel and its messages: a live ``LiveEvent/channelDeleted(channelURL:)``.
    public func deleteChannel(_ channelURL: String) {
        for message in messagesByChannel[channelURL] ?? [] { record(channelURL, message.messageID, deleted: true) }
        messagesByChannel[channelURL] = nil
        publish(.channelDeleted(channelURL: channelURL))
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
        forget()
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

    /// The users with these ids that the server has (see ``UserSource``).
    public func users(withIDs userIDs: [String]) async throws -> [ChatUser] {
        try await answer(.users(userIDs))
        return userIDs.compactMap { usersByID[$0] }
    }

    /// A page of the channel's messages (see ``MessageSource``).
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

    /// The current point of the change sequence (see ``MessageSource``).
    public func changeLogToken(in channelURL: String) async throws -> String {
        try await answer(.changeLogToken(channelURL: channelURL))
        return String(sequence)
    }

    /// The channel's changes since `token`, up to ``changeLogPageSize`` (see ``MessageSource``).
    public func changeLog(in channelURL: String, since token: String) async throws -> MessageChangeLog<ChatMessage> {
        try await answer(.changeLog(channelURL: channelURL, since: token))
        guard let start = Int(token), start >= 0, start <= sequence else { throw Failure.badToken(token) }
        guard start >= forgottenThrough else { return .tokenTooOld }
        let pending = changes.filter { $0.sequence > start && $0.channelURL == channelURL }
        let page = pending.prefix(changeLogPageSize)
        let hasMore = pending.count > page.count
        // The last change of each message in the page decides: updated (as it is now) or deleted.
        var last = [Int64: Change]()
        for change in page { last[change.messageID] = change }
        let current = messagesByChannel[channelURL] ?? []
        let updated = current.filter { last[$0.messageID]?.deleted == false }
        let deleted = page.filter { $0.deleted && last[$0.messageID]?.sequence == $0.sequence }.map(\.messageID)
        let next = hasMore ? page.last!.sequence : sequence
        return .changes(updated: updated, deleted: deleted, next: String(next), hasMore: hasMore)
    }

    /// Live events from now on, while online (see ``MessageSource``).
    public func liveEvents() async -> AsyncStream<LiveEvent<ChatMessage>> {
        let (stream, continuation) = AsyncStream.makeStream(of: LiveEvent<ChatMessage>.self)
        let id = nextSubscriber
        nextSubscriber += 1
        subscribers[id] = continuation
        continuation.onTermination = { _ in Task { await self.unsubscribe(id) } }
        return stream
    }

    private func unsubscribe(_ id: Int) {
        subscribers[id] = nil
    }

    /// Delivers `event` to every subscriber, unless offline.
    private func publish(_ event: LiveEvent<ChatMessage>) {
        guard !isOffline else { return }
        for continuation in subscribers.values { continuation.yield(event) }
    }

    /// Adds a change to the sequence, forgetting the oldest past the retention.
    private func record(_ channelURL: String, _ messageID: Int64, deleted: Bool) {
        sequence += 1
        changes.append(Change(sequence: sequence, channelURL: channelURL, messageID: messageID, deleted: deleted))
        forget()
    }

    private func forget() {
        guard changes.count > changeLogRetention else { return }
        let dropped = changes.count - changeLogRetention
        forgottenThrough = changes[dropped - 1].sequence
        changes.removeFirst(dropped)
    }

    /// Records `call`, waits the latency, then fails it when offline or scripted to.
    private func answer(_ call: Call) async throws {
        calls.append(call)
        if latency > .zero { try await Task.sleep(for: latency) }
        if isOffline { throw Failure.offline }
        if failuresToCome > 0 {
            failuresToCome -= 1
            throw Failure.scripted(call: "\(call)")
        }
    }
}
