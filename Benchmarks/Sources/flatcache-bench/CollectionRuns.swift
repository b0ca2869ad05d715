import BenchmarkKit
import FlatCache
import FlatCacheTesting
import Foundation

/// Starting a `MessageCollection` on a cached channel: the time until its
/// first event, `.cachedPage`, next to `messages.loadLatest(in:limit:)` on
/// its own and SQLite's newest 30 of the same channel. Reported, not
/// checked against a target.
struct CollectionResult {
    /// Where the channel's page comes from.
    enum Case: CaseIterable {
        /// A channel loaded whole before, so in the memory tier.
        case memory
        /// A store opened just before (untimed): its first touch of the channel.
        case firstTouch
        /// A store opened inside the timing, then its first touch of the channel.
        case openAndFirstPage
    }

    /// What takes the page.
    enum Contender: CaseIterable {
        /// `MessageCollection(...)`, `start()` in a task, until `events` delivers `.cachedPage`.
        case collection
        /// `cache.messages.loadLatest(in:limit: 30)`.
        case loadLatest
        /// `SQLiteSystem`'s prepared page query, before `Int64.max`: the newest 30 by `message_ts`.
        case sqlite
    }

    var samples = [Case: [Contender: Samples]]()
    /// Measured rounds per case (after the warm-up).
    var rounds = [Case: Int]()
    /// The channels the memory case cycles through, each loaded whole before.
    var memoryChannels = 0
    /// The memory tier's hits and misses during the memory case (collection and `loadLatest` rounds).
    var memoryHits = 0
    var memoryMisses = 0
}

/// Measures a collection's first page on fresh stores of a workload: a
/// FlatCache folder (durability off, as `FlatCacheSystem` saves it) and
/// SQLite through the benchmark's `SQLiteSystem`, both in `scratch`.
struct CollectionRuns {
    typealias Cache = ChatCache<ChatMessage, ChatChannel, ChatUser>

    let workload: Workload
    /// Emptied first.
    let scratch: URL
    let rounds: Int

    /// A page takes microseconds: each case runs this many times more rounds than the main table.
    static let memoryRoundsFactor = 100
    static let coldRoundsFactor = 50
    /// Untimed rounds before the measured ones, for each case.
    static let warmUp = 10
    static let pageSize = 30
    /// The channels of the memory case, as in "open again" and "page of 30 … loaded before".
    static let memoryChannels = 10
    /// The simulated server answers after this: the collection is timed on the cache alone.
    static let latency = Duration.seconds(10)

    func measure() throws -> CollectionResult {
        try? FileManager.default.removeItem(at: scratch)
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        let folder = scratch.appendingPathComponent("flatcache")
        let saving = try Cache(directory: folder, configuration: PolicyRuns.configuration)
        try waiting { [workload] in
            try await saving.channels.replace(with: workload.channels)
            for (channel, messages) in zip(workload.channels, workload.messages) {
                try await saving.messages.replace(messages, in: channel.channelURL)
            }
            try await saving.close()
        }
        let sqlite = try SystemKind.sqlite.open(in: scratch.appendingPathComponent("sqlite"), durable: false)
        try sqlite.saveEverything(workload)
        let server = SimulatedChatServer()
        try waiting { await server.setLatency(Self.latency) }

        var result = CollectionResult()
        try measureMemory(folder: folder, sqlite: sqlite, server: server, into: &result)
        try measureCold(.firstTouch, folder: folder, sqlite: sqlite, server: server, into: &result)
        try measureCold(.openAndFirstPage, folder: folder, sqlite: sqlite, server: server, into: &result)
        return result
    }

    /// The first 10 channels, loaded whole once, then one page a round, cycling through them.
    private func measureMemory(
        folder: URL, sqlite: any CacheSystem, server: SimulatedChatServer, into result: inout CollectionResult
    ) throws {
        let count = rounds * Self.memoryRoundsFactor
        progress("[\(workload.name)] collections: first page, channel in memory, \(count) rounds")
        let cache = try Cache(directory: folder, configuration: PolicyRuns.configuration)
        let urls = Array(workload.channelURLs.prefix(Self.memoryChannels))
        try waiting { for url in urls { _ = try await cache.messages.load(in: url) } }
        _ = try waiting { try await cache.sweep() }
        let before = try waiting { try await cache.statistics() }
        result.samples[.memory] = try interleaved(rounds: count) { contender, round in
            let index = round % urls.count
            switch contender {
            case .sqlite: return try time { try checkSQLite(sqlite, index) }
            case .collection, .loadLatest:
                let page = try Self.firstPage(contender, in: urls[index], from: .open(cache), server: server)
                try check(page.page, index)
                return page.seconds
            }
        }
        let after = try waiting { try await cache.statistics() }
        (result.memoryHits, result.memoryMisses) = (after.memoryHits - before.memoryHits, after.memoryMisses - before.memoryMisses)
        guard result.memoryMisses == 0, result.memoryHits >= 2 * (Self.warmUp + count) else {
            throw BenchmarkError("The memory case read the disk: \(result.memoryHits) hits, \(result.memoryMisses) misses")
        }
        try waiting { try await cache.close() }
        result.rounds[.memory] = count
        result.memoryChannels = urls.count
    }

    /// Each round a new store (a `ChatCache`, a `DatabasePool`), opened
    /// untimed for `.firstTouch` and inside the timing for
    /// `.openAndFirstPage`, and the page of a channel it never touched.
    /// The sweep each open queues is waited for, untimed, before the timing
    /// of `.firstTouch` and after that of `.openAndFirstPage`.
    private func measureCold(
        _ kind: CollectionResult.Case, folder: URL, sqlite: any CacheSystem, server: SimulatedChatServer,
        into result: inout CollectionResult
    ) throws {
        let count = rounds * Self.coldRoundsFactor
        let label = kind == .firstTouch ? "first touch after opening" : "open + first page"
        progress("[\(workload.name)] collections: \(label), \(count) rounds")
        let urls = workload.channelURLs
        let opensInside = kind == .openAndFirstPage
        var opened: Cache?
        result.samples[kind] = try interleaved(
            rounds: count,
            prepare: { contender, _ in
                switch (contender, opensInside) {
                case (.sqlite, false): try sqlite.reopen()
                case (.sqlite, true): break
                case (_, true): opened = nil
                case (_, false):
                    opened = nil
                    let cache = try Cache(directory: folder, configuration: PolicyRuns.configuration)
                    _ = try waiting { try await cache.sweep() }
                    opened = cache
                }
            }
        ) { contender, round in
            let index = round % urls.count
            switch contender {
            case .sqlite:
                return try time {
                    if opensInside { try sqlite.reopen() }
                    try checkSQLite(sqlite, index)
                }
            case .collection, .loadLatest:
                let store: Store = opened.map { .open($0) } ?? .opening(folder)
                let page = try Self.firstPage(contender, in: urls[index], from: store, server: server)
                try check(page.page, index)
                if opensInside { _ = try waiting { try await page.cache.sweep() } }
                return page.seconds
            }
        }
        result.rounds[kind] = count
    }

    /// Runs every contender `warmUp + rounds` times, interleaved round by
    /// round, each round in another order (rotated); keeps the seconds
    /// `body` returns for the last `rounds`. `prepare` runs untimed first.
    private func interleaved(
        rounds: Int, prepare: (CollectionResult.Contender, Int) throws -> Void = { _, _ in },
        _ body: (CollectionResult.Contender, Int) throws -> Double
    ) throws -> [CollectionResult.Contender: Samples] {
        let contenders = CollectionResult.Contender.allCases
        var samples = [CollectionResult.Contender: Samples]()
        for round in 0..<(Self.warmUp + rounds) {
            let shift = round % contenders.count
            for contender in contenders[shift...] + contenders[..<shift] {
                try prepare(contender, round)
                let seconds = try body(contender, round)
                if round >= Self.warmUp { samples[contender, default: Samples()].seconds.append(seconds) }
            }
        }
        return samples
    }

    /// The cache a FlatCache round reads: open already, or to open inside the timing.
    enum Store: Sendable {
        case open(Cache)
        case opening(URL)
    }

    /// In a task, timed there (so the benchmark thread's wake-up is not in
    /// it): opens the cache when `store` says so, then takes the channel's
    /// newest page the contender's way. A collection is then disposed and
    /// its start, waiting for the server, checked to end with
    /// `collectionDisposed`: the server never answered.
    static func firstPage(
        _ contender: CollectionResult.Contender, in channelURL: String, from store: Store, server: SimulatedChatServer
    ) throws -> (seconds: Double, page: [ChatMessage], cache: Cache) {
        try waiting {
            let start = DispatchTime.now().uptimeNanoseconds
            let cache: Cache
            switch store {
            case .open(let open): cache = open
            case .opening(let folder): cache = try Cache(directory: folder, configuration: PolicyRuns.configuration)
            }
            guard contender == .collection else {
                let page = try await cache.messages.loadLatest(in: channelURL, limit: pageSize)
                return (Self.seconds(since: start), page, cache)
            }
            let collection = try MessageCollection(
                channelURL: channelURL, store: cache.messages, source: server, pageSize: pageSize)
            let starting = Task { try await collection.start() }
            var events = collection.events.makeAsyncIterator()
            let first = await events.next()
            let seconds = Self.seconds(since: start)
            await collection.dispose()
            starting.cancel()
            guard case .failure(let error) = await starting.result, case .collectionDisposed? = error as? FlatCacheError
            else { throw BenchmarkError("The collection's start did not wait for the server") }
            guard case .cachedPage(let page)? = first else {
                throw BenchmarkError("The collection's first event was \(String(describing: first)), not .cachedPage")
            }
            return (seconds, page, cache)
        }
    }

    /// Seconds since `start`, a `DispatchTime` in nanoseconds, as `time(_:)` measures.
    private static func seconds(since start: UInt64) -> Double {
        Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    /// Throws unless `page` is the newest 30 messages of channel `index`, oldest first.
    private func check(_ page: [ChatMessage], _ index: Int) throws {
        let expected = workload.messages[index].suffix(Self.pageSize).map(\.messageID)
        guard page.map(\.messageID) == Array(expected) else {
            throw BenchmarkError("FlatCache's first page of channel \(index) is not its newest \(Self.pageSize) messages")
        }
    }

    /// SQLite's newest page of channel `index`: the benchmark's page query before `Int64.max`.
    private func checkSQLite(_ sqlite: any CacheSystem, _ index: Int) throws {
        let query = PageQuery(channelURL: workload.channels[index].channelURL, before: .max)
        let count = try sqlite.loadPages([query])
        guard count == min(Self.pageSize, workload.messages[index].count) else {
            throw BenchmarkError("SQLite's newest page of channel \(index) held \(count) messages")
        }
    }
}

extension CollectionResult {
    /// The report's table for workload `name`, with what each row measures.
    func markdown(workload name: String) -> [String] {
        guard !samples.isEmpty else { return [] }
        var out = ["\n### \(name): a collection's first page (reported, no target)\n"]
        out.append("| newest 30 messages of a channel | FlatCache: `MessageCollection`, created until `.cachedPage` "
            + "| FlatCache: `messages.loadLatest(in:limit: 30)` | SQLite (GRDB) | collection / SQLite "
            + "| loadLatest / SQLite |")
        out.append("|---|---|---|---|---|---|")
        let labels: [(Case, String)] = [
            (.memory, "channel in the memory tier (\(memoryChannels) channels loaded before)"),
            (.firstTouch, "first touch, a new `ChatCache` (`DatabasePool`) opened before, untimed"),
            (.openAndFirstPage, "a new `ChatCache` (`DatabasePool`) + the first page"),
        ]
        for (kind, label) in labels {
            guard let row = samples[kind], let sqlite = row[.sqlite]?.median else { continue }
            let cells = Contender.allCases.map { row[$0]?.summary ?? "–" }
            let ratios = [Contender.collection, .loadLatest].map { contender in
                row[contender].map { String(format: "%.2fx", $0.median / sqlite) } ?? "–"
            }
            out.append("| \(label), \(rounds[kind] ?? 0) rounds | " + (cells + ratios).joined(separator: " | ") + " |")
        }
        out.append("")
        let overheads = labels.compactMap { kind, _ -> String? in
            guard let row = samples[kind], let mine = row[.collection]?.median, let bare = row[.loadLatest]?.median
            else { return nil }
            return Report.microseconds(mine - bare)
        }
        out.append("The collection's timing runs in a task, from just before `MessageCollection(...)` (and the "
            + "`ChatCache` in the last row) until `events` delivers `.cachedPage`; `start()` runs in a task of its own, "
            + "and the simulated server answers after \(CollectionRuns.latency), so each start is disposed while it "
            + "waits for the server (checked: it ended with `collectionDisposed`). `loadLatest` is timed in a task the "
            + "same way; SQLite's prepared query (`message_ts < ?` with `Int64.max`, newest first, `LIMIT 30`, one read "
            + "transaction) on the benchmark's thread. Every page checked to be the channel's newest 30. Rounds cycle "
            + "through the channels, contenders in rotating order, after \(CollectionRuns.warmUp) warm-up rounds. "
            + "Memory case: \(memoryHits) memory hits, \(memoryMisses) misses (checked 0). "
            + "The collection's own cost (collection − loadLatest medians, by row): \(overheads.joined(separator: ", ")).")
        return out
    }
}
