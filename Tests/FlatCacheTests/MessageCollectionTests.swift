import Foundation
import Testing

@testable import FlatCache
import FlatCacheTesting

/// The message collection against the simulated server: cache first, then
/// the server; paging over holes, change logs, gaps, live events, dispose.
@Suite struct MessageCollectionTests {
    typealias Cache = ChatCache<ChatMessage, ChatChannel, ChatUser>
    typealias Event = MessageCollectionEvent<ChatMessage>

    let folder = try! TemporaryFolder()
    let server = SimulatedChatServer()
    let channel = "trip"

    static func message(_ id: Int64, in channel: String = "trip", at createdAt: Int64? = nil, _ text: String? = nil) -> ChatMessage {
        ChatMessage(messageID: id, channelURL: channel, createdAt: createdAt ?? id * 1_000, text: text ?? "message \(id)")
    }

    static func messages(_ ids: ClosedRange<Int64>, in channel: String = "trip") -> [ChatMessage] {
        ids.map { message($0, in: channel) }
    }

    func cache(maxMessagesPerChannel: Int = 200) throws -> Cache {
        try ChatCache(
            directory: folder.url,
            configuration: Configuration(maxMessagesPerChannel: maxMessagesPerChannel, writeDelay: .zero, sizeLimit: nil))
    }

    func collection(
        _ cache: Cache, startingPoint: Int64 = MessageCollection<ChatMessage>.now, pageSize: Int = 30,
        threshold: Int = 300
    ) throws -> MessageCollection<ChatMessage> {
        try MessageCollection(
            channelURL: channel, store: cache.messages, source: server, startingPoint: startingPoint, pageSize: pageSize,
            hugeGapThreshold: threshold)
    }

    /// Whether an error is `expected` (FlatCacheError is not Equatable: its underlying errors are any Error).
    static func isError(_ expected: FlatCacheError) -> @Sendable (any Error) -> Bool {
        let text = "\(expected)"
        return { "\($0)" == text }
    }

    /// The ids of `messages`.
    static func ids(_ messages: [ChatMessage]) -> [Int64] { messages.map(\.messageID) }

    /// Checks the view is chronological with each id once.
    static func expectInOrder(_ messages: [ChatMessage], sourceLocation: SourceLocation = #_sourceLocation) {
        let ordered = messages.sorted { ($0.createdAt, $0.messageID) < ($1.createdAt, $1.messageID) }
        #expect(ids(messages) == ids(ordered), "out of order", sourceLocation: sourceLocation)
        #expect(Set(ids(messages)).count == messages.count, "a message twice", sourceLocation: sourceLocation)
    }

    // MARK: - Start

    @Test func startDeliversTheCachedPageThenTheServersPageWhichReplacesTheCachedRange() async throws {
        // Given a cache with 3 messages (one the server no longer has) and a server with 40
        let cache = try cache()
        try await cache.messages.save([Self.message(38), Self.message(39, at: 39_500), Self.message(40)])
        await server.send(Self.messages(1...37) + Self.messages(39...40))
        let collection = try collection(cache)
        let log = EventLog(collection.events)

        // When it starts
        try await collection.start()

        // Then the cached page came first, then the server's newest 30, which replaced it
        try await log.wait { $0.count >= 2 }
        guard case .cachedPage(let cached) = log.all[0], case .replaced(let fresh) = log.all[1] else {
            Issue.record("events: \(log.all)")
            return
        }
        #expect(Self.ids(cached) == [38, 39, 40])
        #expect(Self.ids(fresh) == Array(10...37) + [39, 40])
        #expect(await Self.ids(collection.messages) == Self.ids(fresh))
        // and the store holds the server's page: 38 went, 39 is the server's
        #expect(try await cache.messages.load(in: channel) == fresh)
        #expect(await collection.hasPrevious)
        #expect(await !collection.hasNext)
        let continuity = try await cache.messages.continuity(in: channel)
        #expect(continuity.completeRanges == [10_001...40_000])
        #expect(continuity.changeLogToken != nil)
    }

    @Test func aStartingPointInThePastOpensOnTheMessagesAtOrBeforeItAndPagesForward() async throws {
        let cache = try cache()
        await server.send(Self.messages(1...100))
        let collection = try collection(cache, startingPoint: 50_000, pageSize: 10)

        try await collection.start()

        #expect(await Self.ids(collection.messages) == Array(41...50))
        #expect(await collection.hasNext)
        let next = try await collection.loadNext()
        #expect(Self.ids(next) == Array(51...60))
        #expect(await Self.ids(collection.messages) == Array(41...60))
    }

    // MARK: - Paging

    @Test func pagingBackReachesTheFirstMessageWithEachOnceInOrder() async throws {
        let cache = try cache()
        await server.send(Self.messages(1...95))
        let collection = try collection(cache)
        try await collection.start()

        var rounds = 0
        while await collection.hasPrevious, rounds < 10 {
            try await collection.loadPrevious()
            rounds += 1
        }

        #expect(await Self.ids(collection.messages) == Array(1...95))
        #expect(rounds == 3)
        #expect(try await cache.messages.continuity(in: channel).completeRanges == [ChannelContinuity.channelStart...95_000])
    }

    @Test func pagesTheCacheKnowsCompleteComeFromItEvenOffline() async throws {
        // Given a channel paged back to its start once
        let cache = try cache()
        await server.send(Self.messages(1...95))
        let first = try collection(cache)
        try await first.start()
        while await first.hasPrevious { try await first.loadPrevious() }
        await first.dispose()

        // When a new collection starts with the server offline
        await server.setOffline(true)
        let collection = try collection(cache)
        await #expect(throws: FlatCacheError.self) { try await collection.start() }
        var pages = [[ChatMessage]]()
        while await collection.hasPrevious, pages.count < 10 { pages.append(try await collection.loadPrevious()) }

        // Then the cache answered every page, back to the first message
        #expect(await Self.ids(collection.messages) == Array(1...95))
        #expect(pages.map(\.count) == [30, 30, 5])
    }

    @Test func pagingOverAHoleTheCacheDoesNotKnowGoesToTheSource() async throws {
        // Given a cache saved without a collection: messages 1-10 and 61-100, a hole between
        let cache = try cache()
        try await cache.messages.save(Self.messages(1...10) + Self.messages(61...100))
        await server.send(Self.messages(1...100))
        let collection = try collection(cache, pageSize: 20)
        try await collection.start()
        let before = await server.calls.count

        // When the view pages back past 61
        let page1 = try await collection.loadPrevious()  // 61-80: the server's, not known complete
        let page2 = try await collection.loadPrevious()  // 41-60: the hole

        // Then nothing was skipped, and both pages came from the server
        #expect(Self.ids(page1) == Array(61...80))
        #expect(Self.ids(page2) == Array(41...60))
        let asked = await server.calls.dropFirst(before).filter {
            if case .messages(_, .before, _, _) = $0 { return true } else { return false }
        }
        #expect(asked.count == 2)
        Self.expectInOrder(await collection.messages)
    }

    @Test func pagingBackPastRetentionAsksTheSourceForWhatTheCacheDropped() async throws {
        // Given a cache that keeps 40 messages per channel
        let cache = try cache(maxMessagesPerChannel: 40)
        await server.send(Self.messages(1...100))
        let collection = try collection(cache, pageSize: 20)
        try await collection.start()

        while await collection.hasPrevious { try await collection.loadPrevious() }

        // Then the view has every message, the cache only the newest 40 with a range no lower than they go
        #expect(await Self.ids(collection.messages) == Array(1...100))
        #expect(Self.ids(try await cache.messages.load(in: channel)) == Array(61...100))
        let ranges = try await cache.messages.continuity(in: channel).completeRanges
        #expect(ranges.allSatisfy { $0.lowerBound > 61_000 })
    }

    // MARK: - Change logs and gaps

    /// Starts a collection on a synced channel of `count` messages, then takes the server offline.
    func syncedThenOffline(_ cache: Cache, count: Int64 = 40, threshold: Int = 300) async throws -> (
        MessageCollection<ChatMessage>, EventLog<Event>
    ) {
        await server.send(Self.messages(1...count))
        let collection = try collection(cache, threshold: threshold)
        let log = EventLog(collection.events)
        try await collection.start()
        try await log.wait { $0.contains { if case .replaced = $0 { true } else { false } } }
        await server.setOffline(true)
        return (collection, log)
    }

    @Test func reconnectingFillsASmallGapWithNothingLostOrRepeated() async throws {
        let cache = try cache()
        let (collection, log) = try await syncedThenOffline(cache)
        await server.send(Self.messages(41...90))

        await server.setOffline(false)
        try await collection.sync()

        let added = try await log.first { if case .added(let messages) = $0 { messages } else { nil } }
        #expect(Self.ids(added) == Array(41...90))
        #expect(log.all.filter { if case .added = $0 { true } else { false } }.count == 1)
        #expect(await Self.ids(collection.messages) == Array(11...90))
        #expect(Self.ids(try await cache.messages.load(in: channel)) == Array(11...90))
        #expect(!log.all.contains { if case .hugeGap = $0 { true } else { false } })
    }

    @Test(arguments: [(300, 300, false), (300, 301, true), (5, 5, false), (5, 6, true), (0, 1, true)])
    func aHugeGapIsOneMessageOverTheThreshold(threshold: Int, missing: Int64, huge: Bool) async throws {
        let cache = try cache(maxMessagesPerChannel: 1_000)
        let (collection, log) = try await syncedThenOffline(cache, threshold: threshold)
        await server.send(Self.messages(41...(40 + missing)))

        await server.setOffline(false)
        try await collection.sync()

        // The last event of the sync: a huge gap, or the missing messages added
        try await log.wait { events in
            events.contains { if case .hugeGap = $0 { true } else if case .added = $0 { true } else { false } }
        }
        let gaps = log.all.filter { if case .hugeGap = $0 { true } else { false } }
        #expect(gaps.count == (huge ? 1 : 0))
        if huge {
            // nothing added: the server's newest page replaced the view and the whole cache
            try await log.wait { $0.filter { if case .replaced = $0 { true } else { false } }.count == 2 }
            let newest = Array((11 + missing)...(40 + missing))
            #expect(await Self.ids(collection.messages) == newest)
            #expect(Self.ids(try await cache.messages.load(in: channel)) == newest)
            #expect(!log.all.contains { if case .added = $0 { true } else { false } })
            #expect(try await collection.loadNext() == [])
            #expect(try await cache.messages.continuity(in: channel).changeLogToken != nil)
        } else {
            #expect(await collection.messages.last?.messageID == 40 + missing)
        }
    }

    @Test func afterAHugeGapANewCollectionFromNowShowsTheServersNewestPage() async throws {
        let cache = try cache(maxMessagesPerChannel: 1_000)
        let (old, _) = try await syncedThenOffline(cache, threshold: 10)
        await server.send(Self.messages(41...100))
        await server.setOffline(false)
        try await old.sync()
        await old.dispose()

        let collection = try collection(cache, threshold: 10)
        let log = EventLog(collection.events)
        try await collection.start()

        #expect(await Self.ids(collection.messages) == Array(71...100))
        #expect(!log.all.contains { if case .hugeGap = $0 { true } else { false } })
        // and paging back crosses the old hole through the server
        while await collection.hasPrevious { try await collection.loadPrevious() }
        #expect(await Self.ids(collection.messages) == Array(1...100))
    }

    @Test func editsAndDeletesWhileOfflineArriveByChangeLogInCacheAndEvents() async throws {
        let cache = try cache()
        let (collection, log) = try await syncedThenOffline(cache)
        await server.edit(messageID: 35, in: channel, text: "edited", updatedAt: 99_000)
        await server.delete(messageID: 36, in: channel)
        await server.delete(messageID: 2, in: channel)  // cached nowhere

        await server.setOffline(false)
        try await collection.sync()

        let updated = try await log.first { if case .updated(let messages) = $0 { messages } else { nil } }
        let deleted = try await log.first { if case .deleted(let ids) = $0 { ids } else { nil } }
        #expect(updated.map(\.text) == ["edited"])
        #expect(deleted == [36])
        let cached = try await cache.messages.load(in: channel)
        #expect(cached.first { $0.messageID == 35 }?.text == "edited")
        #expect(!cached.contains { $0.messageID == 36 })
        #expect(await !collection.messages.contains { $0.messageID == 36 })
    }

    @Test func aNewCollectionAfterLiveMessagesShowsEachMessageOnceInOrder() async throws {
        // Given a collection that got 5 live messages, disposed, and 3 more sent after it
        let cache = try cache()
        await server.send(Self.messages(1...40))
        let first = try collection(cache)
        let firstLog = EventLog(first.events)
        try await first.start()
        await server.send(Self.messages(41...45))
        try await firstLog.wait { $0.filter { if case .added = $0 { true } else { false } }.count == 5 }
        await first.dispose()
        await server.send(Self.messages(46...48))

        // When a new collection starts on the same cache
        let collection = try collection(cache)
        let log = EventLog(collection.events)
        try await collection.start()

        // Then the cached page and the server's page each hold every message once, in order
        try await log.wait { $0.count >= 2 }
        guard case .cachedPage(let cached) = log.all[0] else {
            Issue.record("events: \(log.all)")
            return
        }
        #expect(Self.ids(cached) == Array(16...45))
        #expect(await Self.ids(collection.messages) == Array(19...48))
        while await collection.hasPrevious { try await collection.loadPrevious() }
        #expect(await Self.ids(collection.messages) == Array(1...48))
    }

    @Test func aSyncAfterAHugeGapRecoversWithTheServersNewestPage() async throws {
        let cache = try cache(maxMessagesPerChannel: 1_000)
        let (collection, log) = try await syncedThenOffline(cache, threshold: 10)
        await server.send(Self.messages(41...100))
        await server.setOffline(false)
        try await collection.sync()
        _ = try await log.first { if case .hugeGap = $0 { true } else { nil } }

        try await collection.sync()
        await server.send([Self.message(101)])

        try await log.wait { events in events.contains { if case .added(let m) = $0 { m.first?.messageID == 101 } else { false } } }
        #expect(await Self.ids(collection.messages) == Array(71...101))
    }

    @Test func aTokenTooOldReplacesTheViewWithTheServersPage() async throws {
        let cache = try cache()
        await server.setChangeLogLimits(retention: 5, pageSize: 100)
        let (collection, log) = try await syncedThenOffline(cache)
        await server.send(Self.messages(41...50))

        await server.setOffline(false)
        try await collection.sync()

        try await log.wait { $0.filter { if case .replaced = $0 { true } else { false } }.count == 2 }
        let replaced = log.all.compactMap { if case .replaced(let messages) = $0 { messages } else { nil } }
        #expect(replaced.last.map(Self.ids) == Array(21...50))
        #expect(await Self.ids(collection.messages) == Array(21...50))
    }

    // MARK: - Live events

    @Test func liveMessagesEditsAndDeletesReachTheViewAndTheCache() async throws {
        let cache = try cache()
        await server.send(Self.messages(1...10))
        let collection = try collection(cache)
        let log = EventLog(collection.events)
        try await collection.start()

        await server.send([Self.message(11)])
        await server.edit(messageID: 5, in: channel, text: "edited", updatedAt: 50_000)
        await server.delete(messageID: 6, in: channel)
        await server.send([Self.message(1, in: "elsewhere")])

        try await log.wait { events in events.contains { if case .deleted = $0 { true } else { false } } }
        #expect(await Self.ids(collection.messages) == [1, 2, 3, 4, 5, 7, 8, 9, 10, 11])
        #expect(await collection.messages.first { $0.messageID == 5 }?.text == "edited")
        try await cache.flush()
        #expect(Self.ids(try await cache.messages.load(in: channel)) == [1, 2, 3, 4, 5, 7, 8, 9, 10, 11])
    }

    @Test func aDeletedChannelEmptiesTheViewAndTheCache() async throws {
        let cache = try cache()
        await server.send(Self.messages(1...10))
        let collection = try collection(cache)
        let log = EventLog(collection.events)
        try await collection.start()

        await server.deleteChannel(channel)

        _ = try await log.first { if case .channelDeleted = $0 { true } else { nil } }
        #expect(await collection.messages.isEmpty)
        #expect(try await cache.messages.loadIfCached(in: channel) == nil)
    }

    @Test func concurrentCallsNeverDeliverAMessageTwiceOrOutOfOrder() async throws {
        let cache = try cache()
        await server.send(Self.messages(1...200))
        await server.setLatency(.milliseconds(2))
        let collection = try collection(cache, pageSize: 15)
        try await collection.start()

        let pages = try await withThrowingTaskGroup(of: [ChatMessage].self) { group in
            for _ in 0..<8 { group.addTask { try await collection.loadPrevious() } }
            group.addTask {
                await server.send(Self.messages(201...205))
                return []
            }
            return try await group.reduce(into: [[ChatMessage]]()) { $0.append($1) }
        }

        let returned = pages.flatMap(Self.ids)
        #expect(Set(returned).count == returned.count)
        for _ in 0..<500 where await collection.messages.last?.messageID != 205 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(await collection.messages.last?.messageID == 205)
        Self.expectInOrder(await collection.messages)
        let shown = await Self.ids(collection.messages)
        #expect(shown.count >= 15 + 8 * 15, "shown: \(shown) pages: \(pages.map { $0.count })")
    }

    // MARK: - Failures and dispose

    @Test func aFailingSourceLeavesTheCacheIntactAndThrowsATypedError() async throws {
        let cache = try cache()
        let (collection, _) = try await syncedThenOffline(cache)
        let cachedBefore = try await cache.messages.load(in: channel)
        let continuityBefore = try await cache.messages.continuity(in: channel)

        await #expect {
            try await collection.sync()
        } throws: { error in
            guard case FlatCacheError.sourceFailed(_, let underlying) = error else { return false }
            return underlying as? SimulatedChatServer.Failure == .offline
        }
        await server.setOffline(false)
        await server.failNextCalls(1)
        await #expect(throws: FlatCacheError.self) { try await collection.loadPrevious() }

        #expect(try await cache.messages.load(in: channel) == cachedBefore)
        #expect(try await cache.messages.continuity(in: channel) == continuityBefore)
        #expect(await Self.ids(collection.messages) == Array(11...40))
    }

    @Test func disposeStopsEventsAndCalls() async throws {
        let cache = try cache()
        await server.send(Self.messages(1...10))
        let collection = try collection(cache)
        let log = EventLog(collection.events)
        try await collection.start()

        await collection.dispose()
        // Events emitted before dispose() may still be on their way: the stream ends after them.
        try await log.wait { _ in log.isFinished }
        let count = log.all.count
        await server.send(Self.messages(11...20))
        try await Task.sleep(for: .milliseconds(100))

        // Live events stopped: the messages sent since reach neither the cache nor the view.
        #expect(Self.ids(try await cache.messages.load(in: channel)) == Array(1...10))
        #expect(await Self.ids(collection.messages) == Array(1...10))
        #expect(log.all.count == count)
        await #expect(performing: { try await collection.loadPrevious() }, throws: Self.isError(.collectionDisposed))
        await #expect(performing: { try await collection.sync() }, throws: Self.isError(.collectionDisposed))
    }

    @Test func badArgumentsAreTypedErrors() throws {
        let cache = try cache()
        #expect(performing: { try MessageCollection(channelURL: "", store: cache.messages, source: server) },
                throws: Self.isError(.emptyChannelURL))
        #expect(performing: { try MessageCollection(channelURL: channel, store: cache.messages, source: server, pageSize: 0) },
                throws: Self.isError(.invalidLimit(0)))
        #expect(throws: FlatCacheError.self) {
            try MessageCollection(channelURL: channel, store: cache.messages, source: server, hugeGapThreshold: -1)
        }
    }
}
