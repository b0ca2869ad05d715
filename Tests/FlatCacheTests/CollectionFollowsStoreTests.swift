import Foundation
import Testing

@testable import FlatCache
import FlatCacheTesting

/// An open collection follows its channel (or the channel list) in the
/// store: what other code saves there, through any store of the folder,
/// reaches its view as ordinary events, and its own writes are told once.
@Suite struct CollectionFollowsStoreTests {
    typealias Cache = ChatCache<ChatMessage, ChatChannel, ChatUser>
    typealias Event = MessageCollectionEvent<ChatMessage>

    let folder = try! TemporaryFolder()
    let server = SimulatedChatServer()
    let channel = "trip"

    func open() async throws -> Cache {
        try await Cache.open(directory: folder.url)
    }

    func message(_ id: Int64, text: String? = nil) -> ChatMessage {
        ChatMessage(messageID: id, channelURL: channel, createdAt: id * 1_000, text: text ?? "message \(id)")
    }

    /// A started collection showing messages 1-3, and the log of its events.
    func started(_ cache: Cache) async throws -> (MessageCollection<ChatMessage>, EventLog<Event>) {
        await server.send((1...3).map { message($0) })
        let collection = try MessageCollection(channelURL: channel, store: cache.messages, source: server)
        let log = EventLog(collection.events)
        try await collection.start()
        return (collection, log)
    }

    static func shown(_ collection: MessageCollection<ChatMessage>) async -> [Int64] {
        await collection.messages.map(\.messageID)
    }

    /// The ids each `.added` event brought, in order.
    static func added(_ events: [Event]) -> [[Int64]] {
        events.compactMap { if case .added(let list) = $0 { list.map(\.messageID) } else { nil } }
    }

    @Test func aMessageSavedThroughTheStoreReachesAnOpenCollection() async throws {
        // Given a collection that shows [1, 2, 3]
        let cache = try await open()
        let (collection, log) = try await started(cache)
        #expect(await Self.shown(collection) == [1, 2, 3])

        // When other code saves message 99 through the same cache's store (async)
        try await cache.messages.save([message(99)])

        // Then the collection shows it, told as one `.added`
        try await log.wait { Self.added($0) == [[99]] }
        #expect(await Self.shown(collection) == [1, 2, 3, 99])
        #expect(try await cache.messages.load(in: channel).map(\.messageID) == [1, 2, 3, 99])
    }

    @Test func blockingWritesAndASecondCacheReachItAsAddedUpdatedAndDeleted() async throws {
        let cache = try await open()
        let other = try await open()
        let (collection, log) = try await started(cache)

        // A blocking save through this cache
        let fourth = message(4)
        _ = try await offThePool { try cache.messages.blocking.save([fourth]) }
        try await log.wait { Self.added($0) == [[4]] }

        // An edit through a second cache on the folder (write-behind: once on disk)
        try await other.messages.save([message(2, text: "edited")])
        try await log.wait { $0.contains { if case .updated(let list) = $0 { list.first?.text == "edited" } else { false } } }

        // A deletion through the second cache, blocking
        let url = channel
        _ = try await offThePool { try other.messages.blocking.applyChangeLog(updated: [], deletedMessageIDs: [1], in: url) }
        try await log.wait { $0.contains { if case .deleted(let ids) = $0 { ids == [1] } else { false } } }

        #expect(await Self.shown(collection) == [2, 3, 4])
        #expect(await collection.messages.first?.text == "edited")
    }

    @Test func theCollectionsOwnLiveMessageIsToldOnce() async throws {
        // Given an open collection
        let cache = try await open()
        let (collection, log) = try await started(cache)

        // When a live message comes (the collection saves it to the store itself), then other code saves one
        await server.send([message(10)])
        try await log.wait { Self.added($0) == [[10]] }
        try await cache.messages.save([message(11)])
        try await log.wait { Self.added($0).count == 2 }
        try await Task.sleep(for: .milliseconds(200))  // past the write-behind flush

        // Then each came once
        #expect(Self.added(log.all) == [[10], [11]])
        #expect(await Self.shown(collection) == [1, 2, 3, 10, 11])

        // And once disposed, the collection stops following the store
        #expect(cache.engine.hub.listenerCount == 1)
        await collection.dispose()
        try await waitUntil("the collection left the hub") { cache.engine.hub.listenerCount == 0 }
    }

    @Test func messagesRetentionDroppedStayShownAndADeletedOneGoes() async throws {
        // Given a channel cached at most 3 messages at a time, and a collection showing 1-3
        let cache = try await Cache.open(directory: folder.url, configuration: Configuration(maxMessagesPerChannel: 3))
        let (collection, log) = try await started(cache)

        // When live messages push 1 and 2 out of the store, then other code deletes 4
        await server.send([message(4)])
        await server.send([message(5)])
        try await log.wait { Self.added($0).count == 2 }
        try await cache.messages.applyChangeLog(updated: [], deletedMessageIDs: [4], in: channel)
        try await log.wait { $0.contains { if case .deleted = $0 { true } else { false } } }
        try await Task.sleep(for: .milliseconds(200))

        // Then only 4 went: retention dropped 1 and 2 from the cache, not from the channel
        let deleted = log.all.compactMap { if case .deleted(let ids) = $0 { ids } else { nil } }
        #expect(deleted == [[4]])
        #expect(await Self.shown(collection) == [1, 2, 3, 5])
        #expect(try await cache.messages.load(in: channel).map(\.messageID) == [3, 5])
    }

    @Test func aChannelSavedThroughTheStoreReachesAnOpenChannelList() async throws {
        // Given a started channel list showing one channel
        let cache = try await open()
        let other = try await open()
        await server.update(channels: [Fixtures.channel("a", lastMessageAt: 1_000)])
        let list = try ChannelListCollection(store: cache.channels, source: server)
        let log = EventLog(list.events)
        try await list.start()

        // When other code saves a channel through the store, and a second cache moves it
        try await cache.channels.save([Fixtures.channel("b", lastMessageAt: 500)])
        try await log.wait { $0.contains { if case .added(let channel) = $0 { channel.channelURL == "b" } else { false } } }
        try await cache.flush()  // else its write-behind would land after the second cache's save, and win
        _ = try await offThePool { try other.channels.blocking.save([Fixtures.channel("b", lastMessageAt: 2_000)]) }
        try await log.wait { $0.contains { if case .moved(let channel) = $0 { channel.channelURL == "b" } else { false } } }

        // Then the list shows both, newest first
        #expect(await list.channels.map(\.channelURL) == ["b", "a"])
    }
}
