/// The users a chat screen shows, cache first: what it has is returned at
/// once, what it lacks is fetched from a ``UserSource`` in one batched call
/// and saved, and profiles that grew old are refreshed in the background.
///
/// Ask it for a page's senders as the page arrives. Concurrent requests for
/// the same id share one fetch, however fast the source answers: a request
/// whose cache read overlapped a fetch joins it rather than asking again. Every user it fetches is saved in the
/// ``UserStore`` it was given, and ``events`` tells which users became known
/// and which refreshed profiles changed, so a screen can redraw them.
///
/// ```swift
/// struct ServerUsers: UserSource {
///     func users(withIDs userIDs: [String]) async throws -> [ChatUser] { try await api.fetchUsers(userIDs) }
/// }
/// let directory = UserDirectory(users: cache.users, source: ServerUsers())
/// let senders = try await directory.users(withIDs: fetched.compactMap { $0.sender?.userID })
/// Task { for await event in directory.events { print(event) } }   // redraw what changed
/// ```
public actor UserDirectory<User: UserRecord> {
    /// What the directory learned from its source.
    public enum Event: Sendable {
        /// Users that were missing, now fetched and saved.
        case fetched([User])
        /// Users whose profile, refreshed because it was older than the
        /// directory's `maxAge`, is not the one cached before.
        case changed([User])
        /// A fetch in the background (a refresh, or one started by
        /// ``cachedUsers(withIDs:)``) failed; the cache is as it was.
        case failed(FlatCacheError)
    }

    /// What the directory learned, as it learns it.
    ///
    /// Each access is a new listener that gets every event from then on, so
    /// any number of loops may follow one directory; the first listener also
    /// gets the events that came before it.
    public nonisolated var events: AsyncStream<Event> { broadcast.subscribe() }
    private let broadcast = Broadcast<Event>(keepingEarlyElements: true)
    private let store: UserStore<User>
    private let source: any UserSource<User>
    /// Milliseconds after its fetch that a profile is refreshed.
    private let maxAge: Int64
    private let clock: CacheClock
    /// When this directory last fetched each user, by the clock.
    private var fetchedAt = [RecordKey: Int64]()
    /// Ids the source did not know when last asked, and when: not asked
    /// again before `maxAge`.
    private var unknownAt = [RecordKey: Int64]()
    /// Fetches under way, by the ids each covers: one task per batch. A
    /// fetch that ended stays here until every lookup that began before it
    /// ended has decided (see ``lookUp(_:fetchingMissingInBackground:)``).
    private var inFlight = [RecordKey: Task<[RecordKey: User], any Error>]()
    /// The number the next lookup gets.
    private var nextLookUp = 0
    /// The lookups between their cache read and their decision, by number.
    private var openLookUps = Set<Int>()
    /// Fetches that ended, with the number of the first lookup that began
    /// after: still joinable by the lookups numbered below it.
    private var ended = [(task: Task<[RecordKey: User], any Error>, keys: [RecordKey], before: Int)]()
    /// Fetches whose outcome is not recorded yet, with what recording needs.
    private var unrecorded = [Task<[RecordKey: User], any Error>: Fetch]()

    /// What recording a fetch's outcome needs: the ids it covers, the cached
    /// profiles it refreshes, and whether anyone waits for it.
    private struct Fetch {
        let keys: [RecordKey]
        let previous: [RecordKey: User]
        let inBackground: Bool
    }

    /// A directory over `users`, fetching what they lack from `source`.
    ///
    /// - Parameters:
    ///   - users: Where users are looked up and fetched ones saved; its tier
    ///     (``UserStore/using(_:)``) applies.
    ///   - source: The app's server.
    ///   - maxAge: How old a profile may get before a request for it
    ///     refreshes it in the background; one day by default. A profile
    ///     this directory did not fetch itself (cached by an earlier run)
    ///     counts as old: each is refreshed once.
    ///   - clock: The time `maxAge` goes by; the system clock by default.
    public init(
        users: UserStore<User>, source: some UserSource<User>, maxAge: Duration = .seconds(86_400),
        clock: CacheClock = .system
    ) {
        store = users
        self.source = source
        self.maxAge = maxAge.saturatingMilliseconds
        self.clock = clock
    }

    deinit {
        broadcast.finish()
    }

    /// The users with these ids: the cached ones, and the missing ones
    /// fetched in one batched call (joining fetches already under way for
    /// any of them) and saved. Users the source does not know are left out
    /// (and not asked for again before `maxAge`).
    ///
    /// Cached profiles older than `maxAge` are returned as they are and
    /// refreshed in the background (see ``events``).
    /// - Parameter userIDs: The ids wanted; repeats are fine.
    /// - Returns: The users found, in the order of their first id in `userIDs`.
    /// - Throws: ``FlatCacheError/sourceFailed(operation:underlying:)`` when
    ///   the fetch failed (nothing was saved), or a file-system error;
    ///   `CancellationError` when the calling task was cancelled (hence untyped
    ///   `throws`): it stops waiting at once, and the fetch goes on, saving what it gets.
    public func users(withIDs userIDs: some Sequence<String>) async throws -> [User] {
        let wanted = Self.unique(userIDs)
        var (found, fetches) = try await lookUp(wanted)
        for task in fetches {
            do {
                let fetched = try await CancellableWait.value(of: task)
                // Recorded before this call returns, so the caller's next request sees it.
                record(task, .success(fetched))
                found.merge(fetched) { cached, _ in cached }
            } catch {
                if error is CancellationError || Task.isCancelled { throw CancellationError() }
                // Not a cancellation of this wait: the fetch itself ended with it.
                record(task, .failure(error))
                let failure = Self.typed(error)
                if case .sourceFailed(_, let underlying) = failure, underlying is CancellationError { throw CancellationError() }
                throw failure
            }
        }
        try Task.checkCancellation()
        return wanted.compactMap { found[$0] }
    }

    /// The cached users with these ids, at once; the missing and old ones
    /// are fetched in the background, and ``events`` tells what came.
    ///
    /// - Parameter userIDs: The ids wanted; repeats are fine.
    /// - Returns: The cached users found, in the order of their first id in `userIDs`.
    /// - Throws: A file-system error.
    public func cachedUsers(withIDs userIDs: some Sequence<String>) async throws(FlatCacheError) -> [User] {
        let wanted = Self.unique(userIDs)
        let found = try await lookUp(wanted, fetchingMissingInBackground: true).found
        return wanted.compactMap { found[$0] }
    }

    /// Returns once every fetch under way has ended, background ones (a
    /// refresh, or one started by ``cachedUsers(withIDs:)``) included, and
    /// what they fetched is saved in the store: call it before closing the
    /// cache (``ChatCache/close()``) when the process is about to exit, so
    /// that no save comes after.
    ///
    /// ```swift
    /// let directory = UserDirectory(users: cache.users, source: server)
    /// _ = try await directory.cachedUsers(withIDs: ["ann"])   // fetched in the background
    /// await directory.settled()
    /// try await cache.close()
    /// ```
    public func settled() async {
        var awaited = Set<Task<[RecordKey: User], any Error>>()
        // Fetches started while it waits are waited for too.
        while let task = inFlight.values.first(where: { !awaited.contains($0) }) {
            awaited.insert(task)
            _ = await task.result
        }
    }

    // MARK: - Fetching

    /// The cached users among `wanted`, and the fetches to wait for the
    /// missing ones: the ones under way, and one started for the rest; old
    /// ones are refreshed in the background.
    ///
    /// Single flight holds whatever the source's latency: the cache read
    /// suspends, and a fetch may end meanwhile, its users saved after the
    /// read looked. So a fetch that ends stays in ``inFlight`` until every
    /// lookup that began before it ended has decided; such a lookup joins
    /// it instead of asking the source again.
    private func lookUp(
        _ wanted: [RecordKey], fetchingMissingInBackground: Bool = false
    ) async throws(FlatCacheError) -> (found: [RecordKey: User], fetches: [Task<[RecordKey: User], any Error>]) {
        let number = nextLookUp
        nextLookUp += 1
        openLookUps.insert(number)
        defer {
            openLookUps.remove(number)
            releaseEnded()
        }
        let wantedSet = Set(wanted)
        var found = [RecordKey: User]()
        for user in try await store.load() where wantedSet.contains(RecordKey(user.userID)) {
            found[RecordKey(user.userID)] = user
        }
        let now = clock.milliseconds
        let missing = wanted.filter { key in
            guard found[key] == nil, inFlight[key] == nil else { return false }
            return unknownAt[key].map { now - $0 > maxAge } ?? true
        }
        let old = wanted.filter { key in
            guard found[key] != nil, inFlight[key] == nil else { return false }
            return fetchedAt[key].map { now - $0 > maxAge } ?? true
        }
        if !missing.isEmpty {
            startFetch(missing, previous: [:], inBackground: fetchingMissingInBackground)
        }
        if !old.isEmpty {
            startFetch(old, previous: found.filter { old.contains($0.key) }, inBackground: true)
        }
        var fetches = [Task<[RecordKey: User], any Error>]()
        for key in wanted where found[key] == nil {
            if let task = inFlight[key], !fetches.contains(task) { fetches.append(task) }
        }
        return (found, fetches)
    }

    /// Forgets the ended fetches no open lookup may still need.
    private func releaseEnded() {
        let oldest = openLookUps.min() ?? nextLookUp
        ended.removeAll { fetch in
            guard fetch.before <= oldest else { return false }
            for key in fetch.keys where inFlight[key] == fetch.task { inFlight[key] = nil }
            return true
        }
    }

    /// Fetches `keys` in one call and saves what comes; `previous` holds the
    /// cached profiles of users being refreshed, to tell which changed.
    private func startFetch(_ keys: [RecordKey], previous: [RecordKey: User], inBackground: Bool) {
        let source = source
        let store = store
        let ids = keys.map(\.string)
        let task = Task { () async throws -> [RecordKey: User] in
            let users: [User]
            do {
                users = try await source.users(withIDs: ids)
            } catch {
                throw FlatCacheError.sourceFailed(operation: "fetch \(ids.count) user\(ids.count == 1 ? "" : "s")", underlying: error)
            }
            // Only what was asked for, once each: a source's extra answers are not this fetch's.
            let asked = Set(keys)
            var fetched = [RecordKey: User]()
            for user in users where asked.contains(RecordKey(user.userID)) { fetched[RecordKey(user.userID)] = user }
            // The `async` save: the blocking one would hold a pool thread on the disk.
            try await store.save(Array(fetched.values))
            return fetched
        }
        for key in keys { inFlight[key] = task }
        unrecorded[task] = Fetch(keys: keys, previous: previous, inBackground: inBackground)
        // A fetch nobody waits for is recorded when it ends; a waiter records it first (see `users(withIDs:)`).
        Task { record(task, await task.result) }
    }

    /// Records a fetch's outcome, once, whoever comes first (a waiter or the
    /// fetch's own follow-up): times, events, and the ids no longer in flight.
    private func record(_ task: Task<[RecordKey: User], any Error>, _ result: Result<[RecordKey: User], any Error>) {
        guard let fetch = unrecorded.removeValue(forKey: task) else { return }
        let (keys, previous, inBackground) = (fetch.keys, fetch.previous, fetch.inBackground)
        // Lookups that began before now may have read the cache before this fetch saved.
        ended.append((task, keys, nextLookUp))
        defer { releaseEnded() }
        switch result {
        case .success(let fetched):
            let now = clock.milliseconds
            for key in keys {
                if fetched[key] == nil { unknownAt[key] = now } else { (fetchedAt[key], unknownAt[key]) = (now, nil) }
            }
            let new = keys.filter { previous[$0] == nil }.compactMap { fetched[$0] }
            let changed = keys.compactMap { key -> User? in
                guard let before = previous[key], let after = fetched[key], !Self.same(before, after) else { return nil }
                return after
            }
            if !new.isEmpty { broadcast.yield(.fetched(new)) }
            if !changed.isEmpty { broadcast.yield(.changed(changed)) }
        case .failure(let error):
            // A caller waiting for it gets the error; a fetch nobody waits for reports it here.
            if inBackground { broadcast.yield(.failed(Self.typed(error))) }
        }
    }

    // MARK: - Helpers

    /// Whether two profiles are the same, byte for byte as the cache stores them.
    private static func same(_ lhs: User, _ rhs: User) -> Bool {
        guard let left = try? lhs.serialize(), let right = try? rhs.serialize() else { return false }
        return left == right
    }

    /// The ids as keys, without repeats, in order.
    private static func unique(_ userIDs: some Sequence<String>) -> [RecordKey] {
        var seen = Set<RecordKey>()
        return userIDs.map(RecordKey.init).filter { seen.insert($0).inserted }
    }

    private static func typed(_ error: any Error) -> FlatCacheError {
        if let error = error as? FlatCacheError { return error }
        return .sourceFailed(operation: "fetch users", underlying: error)
    }
}
