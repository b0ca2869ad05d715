import Foundation
import Testing

@testable import FlatCache
import FlatCacheTesting

/// A token too old and a huge gap: the server's page becomes the channel's
/// whole cache, so nothing older is served as if it were still continuous.
@Suite struct MessageCollectionReloadTests {
    typealias Cache = ChatCache<ChatMessage, ChatChannel, ChatUser>
    typealias Event = MessageCollectionEvent<ChatMessage>

    let folder = try! TemporaryFolder()
    let server = SimulatedChatServer()
    let channel = "trip"

    func cache() throws -> Cache {
        try ChatCache(
            directory: folder.url, configuration: Configuration(maxMessagesPerChannel: 1_000, writeDelay: .zero, sizeLimit: nil))
    }

    func collection(_ cache: Cache, pageSize: Int, threshold: Int = 300) throws -> MessageCollection<ChatMessage> {
        try MessageCollection(channelURL: channel, store: cache.messages, source: server, pageSize: pageSize, hugeGapThreshold: threshold)
    }

    static func messages(_ ids: ClosedRange<Int64>, in channel: String = "trip") -> [ChatMessage] {
        ids.map { ChatMessage(messageID: $0, channelURL: channel, createdAt: $0 * 1_000, text: "message \($0)") }
    }

    static func ids(_ messages: [ChatMessage]) -> [Int64] { messages.map(\.messageID) }

    @Test func afterATokenTooOldPagingBackServesNoDeletedOrStaleMessage() async throws {
        // Given a channel paged to its beginning, every message cached and known complete
        let cache = try cache()
        await server.send(Self.messages(1...40))
        let collection = try collection(cache, pageSize: 10)
        let log = EventLog(collection.events)
        try await collection.start()
        while await collection.hasPrevious { try await collection.loadPrevious() }
        #expect(try await cache.messages.continuity(in: channel).completeRanges.first?.lowerBound == ChannelContinuity.channelStart)

        // and, while offline, an old message deleted, another edited, and the token gone past the change log's memory
        await server.setOffline(true)
        #expect(await server.delete(messageID: 5, in: channel))
        #expect(await server.edit(messageID: 7, in: channel, text: "edited while away", updatedAt: 99_000))
        await server.send(Self.messages(41...42))
        await server.setChangeLogLimits(retention: 1, pageSize: 100)
        await server.setOffline(false)

        // When it syncs
        try await collection.sync()

        // Then the newest page is all the cache holds and knows complete
        try await log.wait { $0.filter { if case .replaced = $0 { true } else { false } }.count == 2 }
        #expect(await Self.ids(collection.messages) == Array(33...42))
        #expect(Self.ids(try await cache.messages.load(in: channel)) == Array(33...42))
        #expect(try await cache.messages.continuity(in: channel).completeRanges == [33_001...42_000])
        // and paging back to the beginning shows the server's messages: 5 gone, 7 edited
        while await collection.hasPrevious { try await collection.loadPrevious() }
        let expected: [Int64] = Array(1...4) + Array(6...42)
        #expect(await Self.ids(collection.messages) == expected)
        #expect(await collection.messages.first { $0.messageID == 7 }?.text == "edited while away")
        let cached = try await cache.messages.load(in: channel)
        #expect(Self.ids(cached) == expected)
        #expect(cached.first { $0.messageID == 7 }?.text == "edited while away")
        await collection.dispose()
    }

    @Test func aNewCollectionWithAnExpiredTokenDropsTheOldCacheBeforePaging() async throws {
        // Given a cache of the whole channel from an earlier collection
        let cache = try cache()
        await server.send(Self.messages(1...25))
        let first = try collection(cache, pageSize: 10)
        try await first.start()
        while await first.hasPrevious { try await first.loadPrevious() }
        await first.dispose()
        #expect(await server.delete(messageID: 3, in: channel))
        #expect(await server.edit(messageID: 4, in: channel, text: "edited", updatedAt: 99_000))
        await server.setChangeLogLimits(retention: 1, pageSize: 100)

        // When a new collection starts and pages back to the beginning
        let collection = try collection(cache, pageSize: 10)
        try await collection.start()
        #expect(Self.ids(try await cache.messages.load(in: channel)) == Array(16...25))
        while await collection.hasPrevious { try await collection.loadPrevious() }

        // Then it shows what the server has
        #expect(await Self.ids(collection.messages) == [1, 2] + Array(4...25))
        #expect(await collection.messages.first { $0.messageID == 4 }?.text == "edited")
        await collection.dispose()
    }

    @Test func aTokenTooOldFromAnIndependentServerWithStringIdsInOneMillisecond() async throws {
        // Given a room of string-id events, 12 of them in one millisecond, paged to its beginning
        let room = "!hiking:example.org"
        let cache = try ChatCache<RoomEvent, ChatChannel, ChatUser>(
            directory: folder.url, configuration: Configuration(writeDelay: .zero, sizeLimit: nil))
        let events = (0..<30).map { index in
            RoomEvent(messageID: "$e\(index)", channelURL: room, createdAt: index < 12 ? 7_000 : Int64(index) * 1_000, body: "event \(index)")
        }
        let source = ForgetfulRoom(room: room, events: events)
        let collection = try MessageCollection(channelURL: room, store: cache.messages, source: source, pageSize: 5)
        try await collection.start()
        while await collection.hasPrevious { try await collection.loadPrevious() }
        #expect(await collection.messages.count == 30)

        // and, while away, one event of the crowded millisecond redacted, one edited, the token forgotten
        await source.remove("$e3")
        await source.edit("$e8", body: "edited")
        await source.forgetTokens()

        // When it syncs and pages back again
        try await collection.sync()
        while await collection.hasPrevious { try await collection.loadPrevious() }

        // Then neither the view nor the cache holds the redacted event or the old text
        let expected = CanonicalOrder.messages(await source.all).map(\.messageID)
        #expect(await collection.messages.map(\.messageID) == expected)
        #expect(await collection.messages.first { $0.messageID == "$e8" }?.body == "edited")
        let cached = try await cache.messages.load(in: room)
        #expect(cached.map(\.messageID) == expected)
        #expect(cached.first { $0.messageID == "$e8" }?.body == "edited")
        await collection.dispose()
    }

    @Test func aHugeGapAtStartMakesTheServersNewestPageTheWholeCache() async throws {
        // Given the channel's 50 newest messages cached by an earlier collection
        let cache = try cache()
        await server.send(Self.messages(1...50))
        let first = try collection(cache, pageSize: 50, threshold: 300)
        try await first.start()
        await first.dispose()

        // and 400 more sent since, more than the threshold
        await server.send(Self.messages(51...450))

        // When a new collection starts
        let collection = try collection(cache, pageSize: 50, threshold: 300)
        let log = EventLog(collection.events)
        try await collection.start()

        // Then it says so, and shows and caches the server's newest page alone
        try await log.wait { $0.contains { if case .replaced = $0 { true } else { false } } }
        let kinds = log.all.map { event -> String in
            switch event {
            case .cachedPage: "cachedPage"
            case .hugeGap: "hugeGap"
            case .replaced(let messages): "replaced \(messages.first?.messageID ?? 0)...\(messages.last?.messageID ?? 0)"
            default: "\(event)"
            }
        }
        #expect(kinds == ["cachedPage", "hugeGap", "replaced 401...450"])
        #expect(await Self.ids(collection.messages) == Array(401...450))
        #expect(Self.ids(try await cache.messages.load(in: channel)) == Array(401...450))
        let continuity = try await cache.messages.continuity(in: channel)
        #expect(continuity.completeRanges == [401_001...450_000])
        #expect(continuity.changeLogToken != nil)
        // and live messages reach it, and paging back walks the whole channel from the server
        await server.send(Self.messages(451...451))
        try await log.wait { $0.contains { if case .added(let added) = $0 { added.first?.messageID == 451 } else { false } } }
        while await collection.hasPrevious { try await collection.loadPrevious() }
        #expect(await Self.ids(collection.messages) == Array(1...451))
        await collection.dispose()
    }
}

/// An independent model server of one room with string ids: pages as the
/// protocol says (time, then id), a change log that only ever says its
/// tokens are too old once forgotten, and no live events.
private actor ForgetfulRoom: MessageSource {
    let room: String
    private(set) var all: [RoomEvent]
    private var generation = 0

    init(room: String, events: [RoomEvent]) {
        self.room = room
        all = events
    }

    func remove(_ id: String) { all.removeAll { $0.messageID == id } }

    func edit(_ id: String, body: String) {
        if let index = all.firstIndex(where: { $0.messageID == id }) { all[index].body = body }
    }

    func forgetTokens() { generation += 1 }

    func messages(in channelURL: String, _ direction: PageDirection, _ timestamp: Int64, limit: Int) async throws
        -> MessagePage<RoomEvent>
    {
        let ordered = CanonicalOrder.messages(all.filter { $0.channelURL == channelURL })
        switch direction {
        case .before:
            let older = ordered.filter { $0.createdAt < timestamp }
            return MessagePage(messages: Array(older.suffix(limit)), hasMore: older.count > limit)
        case .after:
            let newer = ordered.filter { $0.createdAt > timestamp }
            return MessagePage(messages: Array(newer.prefix(limit)), hasMore: newer.count > limit)
        }
    }

    func changeLogToken(in channelURL: String) async throws -> String { "g\(generation)" }

    func changeLog(in channelURL: String, since token: String) async throws -> MessageChangeLog<RoomEvent> {
        token == "g\(generation)" ? .changes(updated: [], deleted: [], next: token, hasMore: false) : .tokenTooOld
    }

    func liveEvents() async -> AsyncStream<LiveEvent<RoomEvent>> { AsyncStream { $0.finish() } }
}
