import Foundation
import Testing

@testable import FlatCache
import FlatCacheTesting

/// Messages that share a millisecond: gap fills near the threshold, string
/// ids in the newest shown millisecond, and paging through a millisecond
/// that holds several pages; each against the simulated server and against
/// an adversarial source (``TieSource``: string ids, ties handed out in
/// reverse, zero latency).
@Suite struct MessageCollectionTiesTests {
    typealias Cache = ChatCache<ChatMessage, ChatChannel, ChatUser>
    typealias RoomCache = ChatCache<RoomEvent, ChatChannel, ChatUser>

    let folder = try! TemporaryFolder()
    let server = SimulatedChatServer()
    let tieSource = TieSource()
    let channel = "trip"

    static func message(_ id: Int64, at createdAt: Int64) -> ChatMessage {
        ChatMessage(messageID: id, channelURL: "trip", createdAt: createdAt, text: "message \(id)")
    }

    static func event(_ number: Int64, at createdAt: Int64) -> RoomEvent {
        RoomEvent(messageID: "e\(number)", channelURL: "trip", createdAt: createdAt, body: "event \(number)")
    }

    /// `count` items numbered from `first`, each at its number's second, but the
    /// last `tied` all at the first of those seconds.
    static func numbered(_ first: Int64, count: Int64, tied: Int64) -> [(Int64, Int64)] {
        let tieTime = (first + count - tied) * 1_000
        return (first..<(first + count)).map { ($0, $0 >= first + count - tied ? tieTime : $0 * 1_000) }
    }

    func cache() throws -> Cache {
        try Cache(directory: folder.url, configuration: Configuration(maxMessagesPerChannel: 2_000, writeDelay: .zero, sizeLimit: nil))
    }

    func roomCache() throws -> RoomCache {
        try RoomCache(directory: folder.url, configuration: Configuration(maxMessagesPerChannel: 2_000, writeDelay: .zero, sizeLimit: nil))
    }

    /// Every range the cache calls complete holds exactly the server's messages there.
    static func expectContinuityTruthful<M: MessageRecord>(
        _ store: MessageStore<M>, server: [M], sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let continuity = try await store.continuity(in: "trip")
        let cached = try await store.load(in: "trip")
        for range in continuity.completeRanges {
            let mine = cached.filter { range.contains($0.createdAt) }.map { "\($0.messageID)" }
            let theirs = CanonicalOrder.messages(server).filter { range.contains($0.createdAt) }.map { "\($0.messageID)" }
            #expect(mine == theirs, "complete range \(range) claims what the server does not have", sourceLocation: sourceLocation)
        }
    }

    /// Pages forward to the end, then back to the start, at most 200 calls
    /// each way; returns the forward pages.
    @discardableResult
    static func pageToBothEnds<M: MessageRecord>(_ collection: MessageCollection<M>) async throws -> [[M]] {
        var pages = [[M]]()
        while await collection.hasNext, pages.count < 200 { pages.append(try await collection.loadNext()) }
        for _ in 0..<200 where await collection.hasPrevious { try await collection.loadPrevious() }
        return pages
    }

    static func isHugeGap<M>(_ event: MessageCollectionEvent<M>) -> Bool { if case .hugeGap = event { true } else { false } }
    static func isAdded<M>(_ event: MessageCollectionEvent<M>) -> Bool { if case .added = event { true } else { false } }
    static func isReplaced<M>(_ event: MessageCollectionEvent<M>) -> Bool { if case .replaced = event { true } else { false } }

    // MARK: - 1. A gap near the threshold whose newest messages share a millisecond

    static let gaps: [(threshold: Int, missing: Int64, tied: Int64, huge: Bool)] = [
        (300, 300, 11, false), (300, 301, 2, true), (300, 299, 150, false), (20, 20, 7, false), (20, 21, 21, true),
        (20, 25, 3, true), (0, 1, 1, true), (1, 1, 1, false),
    ]

    @Test(arguments: gaps)
    func aGapNearTheThresholdWithTiedNewestMessagesLosesNoneAndClaimsNothingUnseen(
        gap: (threshold: Int, missing: Int64, tied: Int64, huge: Bool)
    ) async throws {
        // Given 30 messages synced, then `missing` more sent offline, the newest `tied` in one millisecond
        let cache = try cache()
        await server.send((1...30).map { Self.message($0, at: $0 * 1_000) })
        let collection = try MessageCollection(
            channelURL: channel, store: cache.messages, source: server, pageSize: 30, hugeGapThreshold: gap.threshold)
        let log = EventLog(collection.events)
        try await collection.start()
        await server.setOffline(true)
        await server.send(Self.numbered(31, count: gap.missing, tied: gap.tied).map { Self.message($0.0, at: $0.1) })

        // When the connection is back
        await server.setOffline(false)
        try await collection.sync()

        // Then either every missing message is shown and cached, or a huge gap is reported and nothing claimed
        try await log.wait { $0.contains(where: Self.isAdded) || $0.filter(Self.isReplaced).count == 2 }
        let all = await server.messages(in: channel)
        #expect(log.all.filter(Self.isHugeGap).count == (gap.huge ? 1 : 0))
        if gap.huge {
            // the server's newest page becomes the view and the channel's whole cache
            let newestPage = Array(CanonicalOrder.messages(all).suffix(30))
            #expect(await collection.messages == newestPage)
            #expect(try await cache.messages.load(in: channel) == newestPage)
        } else {
            #expect(await collection.messages == CanonicalOrder.messages(all))
            #expect(try await cache.messages.load(in: channel) == CanonicalOrder.messages(all))
            let newest = try #require(all.map(\.createdAt).max())
            #expect(try await cache.messages.continuity(in: channel).completeRange(containing: newest) != nil)
        }
        try await Self.expectContinuityTruthful(cache.messages, server: all)
    }

    @Test(arguments: gaps)
    func aGapNearTheThresholdWithTiedNewestStringIdsLosesNoneFromAnAdversarialSource(
        gap: (threshold: Int, missing: Int64, tied: Int64, huge: Bool)
    ) async throws {
        let cache = try roomCache()
        await tieSource.send((1...30).map { Self.event($0, at: $0 * 1_000) })
        let collection = try MessageCollection(
            channelURL: channel, store: cache.messages, source: tieSource, pageSize: 30, hugeGapThreshold: gap.threshold)
        let log = EventLog(collection.events)
        try await collection.start()
        await tieSource.send(Self.numbered(31, count: gap.missing, tied: gap.tied).map { Self.event($0.0, at: $0.1) })

        try await collection.sync()

        try await log.wait { $0.contains(where: Self.isAdded) || $0.filter(Self.isReplaced).count == 2 }
        let sent = CanonicalOrder.messages(
            (1...30).map { Self.event($0, at: $0 * 1_000) }
                + Self.numbered(31, count: gap.missing, tied: gap.tied).map { Self.event($0.0, at: $0.1) })
        #expect(log.all.filter(Self.isHugeGap).count == (gap.huge ? 1 : 0))
        if gap.huge {
            #expect(await collection.messages == Array(sent.suffix(30)))
            #expect(try await cache.messages.load(in: channel) == Array(sent.suffix(30)))
        } else {
            #expect(await collection.messages == sent)
            #expect(try await cache.messages.load(in: channel) == sent)
        }
        try await Self.expectContinuityTruthful(cache.messages, server: sent)
    }

    // MARK: - 3. A new message in the newest shown millisecond that sorts before the newest shown

    @Test func aNewStringIdInTheNewestShownMillisecondIsAddedInItsPlace() async throws {
        // Given e1...e4 shown, e4 the newest at 4 s
        let cache = try roomCache()
        await tieSource.send((1...4).map { Self.event($0, at: $0 * 1_000) })
        let collection = try MessageCollection(channelURL: channel, store: cache.messages, source: tieSource)
        let log = EventLog(collection.events)
        try await collection.start()

        // When e10 arrives in e4's millisecond ("e10" < "e4": it sorts before it), then e11 after
        let e10 = Self.event(10, at: 4_000)
        let e11 = Self.event(11, at: 5_000)
        await tieSource.send([e10, e11])
        try await collection.sync()

        // Then both are added, e10 in its place by time, then id
        let added = try await log.first { if case .added(let messages) = $0 { messages } else { nil } }
        #expect(added.map(\.messageID) == ["e10", "e11"])
        #expect(await collection.messages.map(\.messageID) == ["e1", "e2", "e3", "e10", "e4", "e11"])
        #expect(try await cache.messages.load(in: channel).map(\.messageID) == ["e1", "e2", "e3", "e10", "e4", "e11"])
    }

    @Test func aNewMessageWithASmallerIdInTheNewestShownMillisecondIsAddedInItsPlace() async throws {
        // Given ids 2, 4, 6, 8 shown (8 the newest, at 4 s), then the server goes offline
        let cache = try cache()
        await server.send((1...4).map { Self.message($0 * 2, at: $0 * 1_000) })
        let collection = try MessageCollection(channelURL: channel, store: cache.messages, source: server)
        let log = EventLog(collection.events)
        try await collection.start()
        await server.setOffline(true)

        // When 7 arrives in 8's millisecond, and 10 after it
        await server.send([Self.message(7, at: 4_000), Self.message(10, at: 5_000)])
        await server.setOffline(false)
        try await collection.sync()

        // Then both are shown, 7 before 8
        let added = try await log.first { if case .added(let messages) = $0 { messages } else { nil } }
        #expect(added.map(\.messageID) == [7, 10])
        #expect(await collection.messages.map(\.messageID) == [2, 4, 6, 7, 8, 10])
    }

    // MARK: - 4. Paging through a millisecond that holds more than two pages

    @Test(arguments: [(25, 10), (25, 1), (7, 3), (31, 30)])
    func pagingForwardAndBackThroughAMillisecondOfSeveralPagesShowsEveryMessageOnce(tied: Int64, pageSize: Int) async throws {
        // Given `tied` messages at 50 s and 25 after it, one per millisecond; the view opens at 50 s
        let cache = try cache()
        let atT = (1...tied).map { Self.message($0, at: 50_000) }
        let later = (1...25).map { Self.message(tied + $0, at: 50_000 + $0) }
        await server.send(atT + later)
        let collection = try MessageCollection(
            channelURL: channel, store: cache.messages, source: server, startingPoint: 50_000, pageSize: pageSize)
        try await collection.start()

        // When it pages forward to the end, then back to the start (bounded)
        try await Self.pageToBothEnds(collection)

        // Then it got there, showing every message once, in order
        #expect(await !collection.hasNext)
        #expect(await !collection.hasPrevious)
        #expect(await collection.messages == atT + later)
        try await Self.expectContinuityTruthful(cache.messages, server: atT + later)
    }

    @Test(arguments: [(25, 10), (25, 1), (7, 3)])
    func pagingThroughAMillisecondOfSeveralPagesOfStringIdsFromAnAdversarialSource(tied: Int64, pageSize: Int) async throws {
        let cache = try roomCache()
        let atT = (1...tied).map { Self.event($0, at: 50_000) }
        let later = (1...25).map { Self.event(tied + $0, at: 50_000 + $0) }
        await tieSource.send(atT + later)
        let collection = try MessageCollection(
            channelURL: channel, store: cache.messages, source: tieSource, startingPoint: 50_000, pageSize: pageSize)
        try await collection.start()

        let pages = try await Self.pageToBothEnds(collection)

        #expect(await !collection.hasNext)
        #expect(await !collection.hasPrevious)
        #expect(await collection.messages == CanonicalOrder.messages(atT + later))
        // Forward pages are full but for the last
        #expect(pages.dropLast().allSatisfy { $0.count == pageSize })
        try await Self.expectContinuityTruthful(cache.messages, server: atT + later)
    }

    // MARK: - Sources that page differently

    @Test(arguments: [(25, 10), (3, 4), (40, 7)])
    func aSourceWhosePagesFinishTheirMillisecondIsPagedThroughOnce(tied: Int64, pageSize: Int) async throws {
        // Given a source that returns more than asked: its pages go on to the end of their last millisecond
        let cache = try roomCache()
        await tieSource.setPaging(finishing: true)
        let atT = (1...tied).map { Self.event($0, at: 50_000) }
        let later = (1...25).map { Self.event(tied + $0, at: 50_000 + $0 / 2) }
        await tieSource.send(atT + later)
        let collection = try MessageCollection(
            channelURL: channel, store: cache.messages, source: tieSource, startingPoint: 50_000, pageSize: pageSize)
        try await collection.start()

        try await Self.pageToBothEnds(collection)

        #expect(await collection.messages == CanonicalOrder.messages(atT + later))
        try await Self.expectContinuityTruthful(cache.messages, server: atT + later)
    }

    @Test func aSourceThatCapsItsPagesBelowAMillisecondFailsWithATypedErrorAndClaimsNothing() async throws {
        // Given a source that never returns more than 5 events, and 8 events in one millisecond after 3 others
        let cache = try roomCache()
        let events = (1...3).map { Self.event($0, at: $0 * 1_000) } + (4...11).map { Self.event($0, at: 9_000) }
        await tieSource.send(Array(events.prefix(3)))
        let collection = try MessageCollection(channelURL: channel, store: cache.messages, source: tieSource, pageSize: 3)
        try await collection.start()
        await tieSource.send(Array(events.dropFirst(3)))
        await tieSource.setPaging(cap: 5)

        // When the collection syncs, it cannot get that millisecond whole: it says so, and shows nothing of it
        await #expect {
            try await collection.sync()
        } throws: { error in
            guard case .sourceFailed(_, let underlying)? = error as? FlatCacheError else { return false }
            return underlying is SplitMillisecond
        }
        #expect(await collection.messages.map(\.messageID) == ["e1", "e2", "e3"])
        #expect(try await cache.messages.continuity(in: channel).completeRange(containing: 9_000) == nil)

        // and with a source that answers whole pages again, the same collection catches up
        await tieSource.setPaging()
        try await collection.sync()
        #expect(await collection.messages == CanonicalOrder.messages(events))
        try await Self.expectContinuityTruthful(cache.messages, server: events)
    }
}
