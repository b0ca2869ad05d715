import FlatCache
import FlatCacheMatrix
import Foundation

/// The rooms of one account kept in one cache: the channel list, a
/// collection per room, and the user directory, printing a line per change.
actor AccountSync {
    private let cache: MatrixCache
    private let source: MatrixSource
    private let pageSize: Int
    private let history: Int
    private let hugeGap: Int
    /// Whether every room's newest page comes from one `/sync` first.
    private let prefetch: Bool
    private let list: ChannelListCollection<MatrixSource.Channel>
    private let directory: UserDirectory<ChatUser>
    private var collections = [String: MessageCollection<MatrixSource.Message>]()
    private var printers = [Task<Void, Never>]()
    private var names = [String: String]()
    /// Whether event lines are printed (with `--follow`); before, events are only noted.
    private var following = false
    /// Rooms whose collection found a huge gap, and rooms whose server page is shown.
    private var hugeGaps = Set<String>()
    private var pageShown = Set<String>()
    private var waitingForPage = [String: [CheckedContinuation<Void, Never>]]()

    init(cache: MatrixCache, source: MatrixSource, pageSize: Int, history: Int, hugeGap: Int, prefetch: Bool = true) throws {
        self.prefetch = prefetch
        self.cache = cache
        self.source = source
        self.pageSize = pageSize
        self.history = history
        self.hugeGap = hugeGap
        list = try ChannelListCollection(store: cache.channels, source: source)
        directory = UserDirectory(users: cache.users, source: source)
    }

    /// How many rooms sync at once: each may make a few requests, and a
    /// server (or URLSession) serves only a few connections per client.
    static let roomsAtOnce = 4

    /// Every room's newest page in one `/sync` (see `MatrixSource.prefetchNewestPages`),
    /// then the channel list, then each room's collection, ``roomsAtOnce``
    /// at a time, then the senders' profiles. A line per room as it is cached.
    func syncOnce() async throws {
        let started = ContinuousClock.now
        // Twice the page and some: a page is complete once the walk is 100 ms (the source's
        // timestampSlack) past its oldest message, which in a burst is many messages more.
        if prefetch {
            do {
                try await source.prefetchNewestPages(eventsPerRoom: min(2 * pageSize + 21, 1_000))
            } catch {
                say("no newest pages in one /sync (\(error)): each room asks the server for its own")
            }
        }
        try await list.start()
        let rooms = await list.channels
        say("\(rooms.count) joined room\(rooms.count == 1 ? "" : "s")")
        var cached = 0
        var done = 0
        let width = String(rooms.count).count
        try await withThrowingTaskGroup(of: (MatrixRoom, Int, String).self) { group in
            var next = 0
            func addNext() {
                guard next < rooms.count else { return }
                let room = rooms[next]
                next += 1
                group.addTask { try await self.syncRoom(room) }
            }
            for _ in 0..<Self.roomsAtOnce { addNext() }
            while let (room, total, note) = try await group.next() {
                done += 1
                cached += total
                let counter = String(repeating: " ", count: width - String(done).count) + "\(done)/\(rooms.count)"
                say("  [\(counter)] \(room.name) (\(room.roomID)): \(total) message\(total == 1 ? "" : "s") cached\(note)")
                addNext()
            }
        }
        await source.endPrefetch()
        _ = try await cache.flush()
        let elapsed = ContinuousClock.now - started
        say("synced \(rooms.count) room\(rooms.count == 1 ? "" : "s"), \(cached) message\(cached == 1 ? "" : "s") cached, in \(elapsed.formatted(.units(allowed: [.seconds, .milliseconds], width: .narrow)))")
    }

    /// One room: its collection started, `history` older pages, its senders' profiles.
    /// Returns the room, how many messages its cache holds, and a note for its line.
    private func syncRoom(_ room: MatrixRoom) async throws -> (MatrixRoom, Int, String) {
        let collection = try await collection(for: room.roomID)
        for _ in 0..<history where await collection.hasPrevious { try await collection.loadPrevious() }
        let shown = await collection.messages
        let users = try await directory.users(withIDs: shown.map(\.sender))
        for user in users { names[user.userID] = user.nickname }
        let total = try await cache.messages.load(in: room.roomID).count
        // A huge gap dropped what was cached before: the newest page is all there is.
        let note = hugeGaps.contains(room.roomID) ? " (a huge gap: more than \(hugeGap) missed; only the newest page is cached)" : ""
        return (room, total, note)
    }

    /// Live events until the process is interrupted (SIGINT or SIGTERM).
    func follow() async throws {
        say("following live events; Ctrl-C to stop")
        following = true
        printers.append(printListEvents())
        await Interrupt.wait()
        say("interrupted")
    }

    /// Disposes the collections.
    func stop() async {
        for collection in collections.values { await collection.dispose() }
        await list.dispose()
        for printer in printers { printer.cancel() }
        // Profiles refreshed in the background are saved before the cache closes: none after.
        await directory.settled()
    }

    private func collection(for roomID: String) async throws -> MessageCollection<MatrixSource.Message> {
        if let existing = collections[roomID] { return existing }
        let collection = try MessageCollection(
            channelURL: roomID, store: cache.messages, source: source, pageSize: pageSize, hugeGapThreshold: hugeGap,
            outbox: cache.outbox)
        collections[roomID] = collection
        // The one reader of its events, from before start(): a huge gap is an event of start().
        printers.append(printEvents(of: collection, roomID: roomID))
        try await collection.start()
        await serverPageShown(in: roomID)
        return collection
    }

    /// Returns once the room's events up to the server's page (the last
    /// event of a `start()` that returned) were read: whether there was a
    /// huge gap before it is known then. Bounded: after 10 s it returns anyway.
    private func serverPageShown(in roomID: String) async {
        guard !pageShown.contains(roomID) else { return }
        let timeout = Task { [weak self] in
            try? await Task.sleep(for: .seconds(10))
            await self?.stopWaiting(in: roomID)
        }
        await withCheckedContinuation { waitingForPage[roomID, default: []].append($0) }
        timeout.cancel()
    }

    private func stopWaiting(in roomID: String) {
        for waiting in waitingForPage.removeValue(forKey: roomID) ?? [] { waiting.resume() }
    }

    private func printEvents(of collection: MessageCollection<MatrixSource.Message>, roomID: String) -> Task<Void, Never> {
        Task { [weak self] in
            for await event in collection.events {
                guard let self else { return }
                await self.describe(event, in: roomID)
            }
        }
    }

    private func printListEvents() -> Task<Void, Never> {
        Task { [weak self, list] in
            for await event in list.events {
                guard let self else { return }
                await self.describe(event)
            }
        }
    }

    private func describe(_ event: MessageCollectionEvent<MatrixMessage>, in roomID: String) async {
        switch event {
        case .hugeGap: hugeGaps.insert(roomID)
        case .replaced:
            pageShown.insert(roomID)
            stopWaiting(in: roomID)
        default: break
        }
        guard following else { return }
        switch event {
        case .added(let messages):
            let users = (try? await directory.users(withIDs: messages.map(\.sender))) ?? []
            for user in users { names[user.userID] = user.nickname }
            for message in messages { say("\(roomID)  + \(Format.line(message, names: names))") }
        case .updated(let messages):
            for message in messages { say("\(roomID)  ~ \(Format.line(message, names: names))") }
        case .deleted(let ids):
            for id in ids { say("\(roomID)  - \(id) redacted") }
        case .hugeGap:
            say("\(roomID)  a huge gap: more than \(hugeGap) missed; the newest page replaces what was cached")
        case .channelDeleted:
            say("\(roomID)  left: its cached messages are gone")
        case .failed(let error):
            say("\(roomID)  failed: \(error)")
        case .cachedPage, .replaced, .prepended, .appended, .channelUpdated, .outboxAdded, .outboxChanged, .outboxConfirmed,
            .outboxCancelled:
            break
        }
    }

    private func describe(_ event: ChannelListEvent<MatrixRoom>) async {
        switch event {
        case .added(let room):
            say("room joined: \(room.name) (\(room.roomID))")
            do {
                _ = try await collection(for: room.roomID)
            } catch {
                say("\(room.roomID)  failed: \(error)")
            }
        case .removed(let roomID):
            say("room left: \(roomID)")
            await collections.removeValue(forKey: roomID)?.dispose()
        case .failed(let error):
            say("room list failed: \(error)")
        case .cachedList, .replaced, .updated, .moved:
            break
        }
    }
}

/// Prints `line` and flushes standard output at once: into a file or a pipe
/// (`sync --follow | tee log`), lines come as they happen, not a buffer later.
func say(_ line: String) {
    print(line)
    fflush(nil)  // every output stream (stdout is not concurrency-safe to name in Swift 6)
}

/// Waits for SIGINT or SIGTERM.
enum Interrupt {
    static func wait() async {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self)
        var sources = [any DispatchSourceSignal]()
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber, SIG_IGN)  // the dispatch source handles it instead
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { continuation.yield() }
            source.resume()
            sources.append(source)
        }
        for await _ in stream { break }
        for source in sources { source.cancel() }
    }
}
