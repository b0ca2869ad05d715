import Foundation
import Testing

@testable import FlatCache
import FlatCacheTesting

/// The user directory against the simulated server: cache first, missing
/// users fetched once in a batch, old ones refreshed, failures typed.
@Suite struct UserDirectoryTests {
    let folder = try! TemporaryFolder()
    let clock = TestClock()
    let server = SimulatedChatServer()

    static func user(_ id: String, _ nickname: String? = nil) -> ChatUser {
        ChatUser(userID: id, nickname: nickname ?? id.capitalized, profileURL: "https://example.com/\(id).png")
    }

    func cache() throws -> ChatCache<ChatMessage, ChatChannel, ChatUser> {
        try ChatCache(directory: folder.url, configuration: Configuration(writeDelay: .zero, sizeLimit: nil))
    }

    func directory(_ cache: ChatCache<ChatMessage, ChatChannel, ChatUser>) -> UserDirectory<ChatUser> {
        UserDirectory(users: cache.users, source: server, maxAge: .seconds(3_600), clock: clock.cacheClock)
    }

    @Test func cachedUsersComeAtOnceAndMissingOnesInOneBatchThenSaved() async throws {
        let cache = try cache()
        try await cache.users.save([Self.user("mina")])
        await server.add(users: ["mina", "kai", "lee"].map { Self.user($0) })
        let directory = directory(cache)

        let found = try await directory.users(withIDs: ["kai", "mina", "lee", "kai", "nobody"])
        #expect(found.map(\.userID) == ["kai", "mina", "lee"])
        // One batch for the missing ids; mina, cached by an earlier run, is refreshed once in the background.
        let calls = await server.calls
        #expect(calls.filter { $0 == .users(["kai", "lee", "nobody"]) }.count == 1)
        #expect(calls.count <= 2)
        try await cache.flush()
        #expect(try ChatCache(directory: folder.url).users.loadNow().map(\.userID) == ["kai", "lee", "mina"])
    }

    @Test func concurrentRequestsForAnIdShareOneFetch() async throws {
        await server.add(users: [Self.user("kai"), Self.user("lee")])
        await server.setLatency(.milliseconds(50))
        let directory = directory(try cache())
        let answers = try await withThrowingTaskGroup(of: [String].self) { group in
            for index in 0..<20 {
                group.addTask { try await directory.users(withIDs: index.isMultiple(of: 2) ? ["kai"] : ["kai", "lee"]).map(\.userID) }
            }
            return try await group.reduce(into: [[String]]()) { $0.append($1) }
        }
        #expect(answers.count == 20)
        #expect(answers.allSatisfy { $0 == ["kai"] || $0 == ["kai", "lee"] })
        let asked = await server.calls.flatMap { call -> [String] in
            guard case .users(let ids) = call else { return [] }
            return ids
        }
        #expect(asked.filter { $0 == "kai" }.count == 1, "\(asked)")
        #expect(asked.filter { $0 == "lee" }.count <= 1, "\(asked)")
    }

    @Test func aFailingSourceIsATypedErrorAndLeavesTheCacheAsItWas() async throws {
        let cache = try cache()
        try await cache.users.save([Self.user("mina")])
        try await cache.flush()
        let before = try Data(contentsOf: folder.appending("users.lines"))
        await server.add(users: [Self.user("kai")])
        await server.setOffline(true)
        let directory = directory(cache)
        await #expect {
            _ = try await directory.users(withIDs: ["kai"])
        } throws: { error in
            guard case .sourceFailed(_, let underlying)? = error as? FlatCacheError else { return false }
            return underlying as? SimulatedChatServer.Failure == .offline
        }
        try await cache.flush()
        #expect(try Data(contentsOf: folder.appending("users.lines")) == before)
        // Back online, the next request fetches it.
        await server.setOffline(false)
        #expect(try await directory.users(withIDs: ["kai"]).map(\.userID) == ["kai"])
    }

    @Test func oldProfilesAreReturnedAtOnceAndRefreshedWithAnEventWhenChanged() async throws {
        let cache = try cache()
        await server.add(users: [Self.user("kai", "Kai")])
        let directory = directory(cache)
        let log = EventLog(directory.events)
        #expect(try await directory.users(withIDs: ["kai"]).map(\.nickname) == ["Kai"])
        _ = try await log.first { event -> [ChatUser]? in if case .fetched(let users) = event { users } else { nil } }

        await server.add(users: [Self.user("kai", "Kai (away)")])
        clock.advance(seconds: 1_800)
        #expect(try await directory.users(withIDs: ["kai"]).map(\.nickname) == ["Kai"])
        #expect(await server.calls.count == 1, "within maxAge: no call")

        clock.advance(seconds: 1_801)
        #expect(try await directory.users(withIDs: ["kai"]).map(\.nickname) == ["Kai"], "old: returned as cached")
        let changed = try await log.first { event -> [ChatUser]? in if case .changed(let users) = event { users } else { nil } }
        #expect(changed.map(\.nickname) == ["Kai (away)"])
        #expect(try await cache.users.user(withID: "kai")?.nickname == "Kai (away)")
        #expect(await server.calls.count == 2)
    }

    @Test func anIdTheSourceDoesNotKnowIsNotAskedForAgainBeforeMaxAge() async throws {
        let directory = directory(try cache())
        #expect(try await directory.users(withIDs: ["ghost"]).isEmpty)
        #expect(try await directory.users(withIDs: ["ghost"]).isEmpty)
        #expect(await server.calls == [.users(["ghost"])])
        clock.advance(seconds: 3_601)
        await server.add(users: [Self.user("ghost")])
        #expect(try await directory.users(withIDs: ["ghost"]).map(\.userID) == ["ghost"])
    }

    /// The fetch's outcome is recorded before the call that waited for it
    /// returns: the clock moving right after cannot date it later (a
    /// ThreadSanitizer run caught the follow-up task recording it late).
    @Test func aFetchIsRecordedBeforeTheCallThatWaitedForItReturns() async throws {
        let directory = directory(try cache())
        for round in 0..<200 {
            let id = "ghost-\(round)"
            #expect(try await directory.users(withIDs: [id]).isEmpty)
            clock.advance(seconds: 3_601)
            await server.add(users: [Self.user(id)])
            #expect(try await directory.users(withIDs: [id]).map(\.userID) == [id], "round \(round)")
        }
    }

    @Test func cachedUsersAnswersAtOnceAndFetchesTheRestInTheBackground() async throws {
        let cache = try cache()
        try await cache.users.save([Self.user("mina")])
        await server.add(users: [Self.user("kai")])
        await server.setLatency(.milliseconds(20))
        let directory = directory(cache)
        let log = EventLog(directory.events)
        #expect(try await directory.cachedUsers(withIDs: ["mina", "kai"]).map(\.userID) == ["mina"])
        let fetched = try await log.first { event -> [ChatUser]? in if case .fetched(let users) = event { users } else { nil } }
        #expect(fetched.map(\.userID) == ["kai"])
        #expect(try await cache.users.user(withID: "kai") != nil)

        // A background fetch that fails is reported as an event.
        await server.failNextCalls(1)
        _ = try await directory.cachedUsers(withIDs: ["lee"])
        let failure = try await log.first { event -> FlatCacheError? in if case .failed(let error) = event { error } else { nil } }
        #expect("\(failure)".contains("as scripted"))
    }

    @Test(arguments: [Duration.zero, .milliseconds(20)])
    func oneMissingIdIsFetchedOnceHoweverFastTheSourceAnswers(writeDelay: Duration) async throws {
        // Given a source that answers at once (no suspension inside) and a directory over a cache
        let source = InstantUsers()
        let cache = try ChatCache(directory: folder.url, configuration: Configuration(writeDelay: writeDelay, sizeLimit: nil))
        let directory = UserDirectory(users: cache.users, source: source, maxAge: .seconds(3_600), clock: clock.cacheClock)
        // Lookups that start while the source answers: they read the cache as the fetch ends.
        let during = Lookups()
        source.onCall = { ids in
            for _ in 0..<50 { during.add(Task { try await directory.users(withIDs: ids).map(\.userID) }) }
        }

        // When, round after round, 100 lookups of one missing id run at once
        let (rounds, lookups) = (500, 100)
        for round in 0..<rounds {
            let id = "user-\(round)"
            var answers = try await withThrowingTaskGroup(of: [String].self) { group in
                for _ in 0..<lookups { group.addTask { try await directory.users(withIDs: [id]).map(\.userID) } }
                return try await group.reduce(into: [[String]]()) { $0.append($1) }
            }
            for task in during.take() { answers.append(try await task.value) }

            // Then every lookup got the user, and the source was asked for it once
            #expect(answers.count >= lookups && answers.allSatisfy { $0 == [id] }, "round \(round)")
            #expect(source.calls(for: id) == 1, "round \(round): \(source.calls(for: id)) calls")
        }
    }
}

extension UserDirectoryTests {
    @Test func settledReturnsOnceABackgroundFetchIsSaved() async throws {
        // Given a fetch in the background that the source answers only after a while
        let cache = try ChatCache(directory: folder.url, configuration: Configuration(writeDelay: .seconds(60), sizeLimit: nil))
        let source = InstantUsers()
        source.onCall = { _ in Thread.sleep(forTimeInterval: 0.2) }
        let directory = UserDirectory(users: cache.users, source: source, maxAge: .seconds(3_600), clock: clock.cacheClock)
        #expect(try await directory.cachedUsers(withIDs: ["ann"]).isEmpty)

        // When the app waits for the directory to settle
        await directory.settled()

        // Then the fetched user is saved, nothing fetched twice
        #expect(try await cache.users.load().map(\.userID) == ["ann"])
        #expect(source.calls(for: "ann") == 1)
        try await cache.close()
    }
}

/// A user source that answers at once, without suspending: every user it
/// is asked for exists. Counts the calls per id, and runs `onCall` (which
/// must not block) as each call starts.
final class InstantUsers: UserSource, @unchecked Sendable {
    private let lock = NSLock()
    private var asked = [String: Int]()  // guarded by `lock`
    private var hook: (@Sendable ([String]) -> Void)?  // guarded by `lock`

    /// Run with the ids of each call, before it answers.
    var onCall: (@Sendable ([String]) -> Void)? {
        get { lock.withLock { hook } }
        set { lock.withLock { hook = newValue } }
    }

    func users(withIDs userIDs: [String]) async throws -> [ChatUser] {
        lock.withLock { for id in userIDs { asked[id, default: 0] += 1 } }
        onCall?(userIDs)
        return userIDs.map { ChatUser(userID: $0, nickname: $0, profileURL: "") }
    }

    /// How many calls asked for `id`.
    func calls(for id: String) -> Int { lock.withLock { asked[id] ?? 0 } }
}

/// Lookup tasks started from inside a source, for the test to wait for.
final class Lookups: @unchecked Sendable {
    private let lock = NSLock()
    private var tasks = [Task<[String], any Error>]()  // guarded by `lock`

    func add(_ task: Task<[String], any Error>) { lock.withLock { tasks.append(task) } }

    /// The tasks added so far; forgets them.
    func take() -> [Task<[String], any Error>] {
        lock.withLock {
            defer { tasks = [] }
            return tasks
        }
    }
}
