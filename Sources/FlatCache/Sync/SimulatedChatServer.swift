/// An in-memory chat server for tests and demos, scriptable like a bad
/// network: it can go offline, fail the next calls, and answer slowly. It
/// implements the sources an app implements over its own server
/// (``UserSource`` so far), so that what is tested against it is what runs
/// against a real one.
///
/// ```swift
/// let server = SimulatedChatServer()
/// await server.add(users: [ChatUser(userID: "mina", nickname: "Mina", profileURL: "")])
/// await server.failNextCalls(1)                  // the next call throws
/// let directory = UserDirectory(users: cache.users, source: server)
/// ```
public actor SimulatedChatServer: UserSource {
    /// Why a call to the simulated server failed.
    public enum Failure: Error, Sendable, Hashable, CustomStringConvertible {
        /// The server was set offline (``setOffline(_:)``).
        case offline
        /// A failure scripted with ``failNextCalls(_:)``.
        case scripted(call: String)

        /// Such as `the simulated server is offline`.
        public var description: String {
            switch self {
            case .offline: "the simulated server is offline"
            case .scripted(let call): "the simulated server failed \(call), as scripted"
            }
        }
    }

    /// A call the server answered or refused, for tests to check what was asked.
    public enum Call: Sendable, Hashable {
        /// ``users(withIDs:)`` with these ids.
        case users([String])
    }

    private var usersByID = [String: ChatUser]()
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
