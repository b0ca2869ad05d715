import Foundation
import Testing

@testable import FlatCache
import FlatCacheTesting

/// Collection, directory and outbox events are multicast: every loop over
/// `events` gets every event, instead of the loops splitting them.
@Suite struct CollectionEventsBroadcastTests {
    typealias Cache = ChatCache<ChatMessage, ChatChannel, ChatUser>
    typealias Event = MessageCollectionEvent<ChatMessage>

    let folder = try! TemporaryFolder()
    let server = SimulatedChatServer()
    let channel = "trip"

    func message(_ id: Int64) -> ChatMessage {
        ChatMessage(messageID: id, channelURL: channel, createdAt: id * 1_000, text: "message \(id)")
    }

    @Test func twoLoopsOverOneCollectionsEventsEachGetAllOfThem() async throws {
        // Given a started collection with two loops over its events
        let cache = try await Cache.open(directory: folder.url)
        await server.send((1...3).map { message($0) })
        let collection = try MessageCollection(channelURL: channel, store: cache.messages, source: server)
        let first = EventLog(collection.events)
        let second = EventLog(collection.events)
        try await collection.start()

        // When twelve live messages come
        for id in Int64(10)..<22 { await server.send([message(id)]) }

        // Then each loop gets the start's events and all twelve
        for log in [first, second] {
            try await log.wait { events in events.filter { if case .added = $0 { true } else { false } }.count == 12 }
        }
        #expect(first.all.count == second.all.count)
        #expect(first.all.map { "\($0)" } == second.all.map { "\($0)" })
        #expect(await collection.messages.count == 15)
    }

    @Test func theFirstListenerGetsTheEventsThatCameBeforeIt() async throws {
        // Given a collection started before anyone listens
        let cache = try await Cache.open(directory: folder.url)
        await server.send((1...3).map { message($0) })
        let collection = try MessageCollection(channelURL: channel, store: cache.messages, source: server)
        try await collection.start()

        // When a loop starts late, and a second one after it
        let late = EventLog(collection.events)
        let later = EventLog(collection.events)
        await server.send([message(4)])

        // Then the first has the start's events, the second only what came after it
        try await late.wait { $0.contains { if case .added = $0 { true } else { false } } }
        try await later.wait { $0.contains { if case .added = $0 { true } else { false } } }
        #expect(late.all.contains { if case .cachedPage = $0 { true } else { false } })
        #expect(!later.all.contains { if case .cachedPage = $0 { true } else { false } })
    }

    @Test func aUserDirectorysEventsReachTwoLoops() async throws {
        let cache = try await Cache.open(directory: folder.url)
        await server.add(users: [ChatUser(userID: "ann", nickname: "Ann"), ChatUser(userID: "ben", nickname: "Ben")])
        let directory = UserDirectory(users: cache.users, source: server)
        let first = EventLog(directory.events)
        let second = EventLog(directory.events)

        _ = try await directory.users(withIDs: ["ann"])
        _ = try await directory.users(withIDs: ["ben"])

        for log in [first, second] { try await log.wait { $0.count == 2 } }
    }

    @Test func aBroadcastForgetsAListenerThatStops() async throws {
        let broadcast = Broadcast<Int>()
        let stream = broadcast.subscribe()
        let listener = Task { for await _ in stream {} }
        #expect(broadcast.listenerCount == 1)
        listener.cancel()
        await listener.value
        try await waitUntil("the listener left") { broadcast.listenerCount == 0 }
    }
}
