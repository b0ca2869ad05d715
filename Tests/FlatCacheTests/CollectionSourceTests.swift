import Foundation
import Testing

@testable import FlatCache
import FlatCacheTesting

/// Collections take any source of their records (`any MessageSource<Message>`),
/// and a call whose task is cancelled throws `CancellationError`.
@Suite struct CollectionSourceTests {
    typealias Cache = ChatCache<ChatMessage, ChatChannel, ChatUser>

    let folder = try! TemporaryFolder()
    let server = SimulatedChatServer()
    let channel = "trip"

    func message(_ id: Int64) -> ChatMessage {
        ChatMessage(messageID: id, channelURL: channel, createdAt: id * 1_000, text: "message \(id)")
    }

    @Test func aCollectionSyncsFromAnExistentialSource() async throws {
        let cache = try await Cache.open(directory: folder.url)
        await server.send((1...40).map { message($0) })
        await server.update(channels: [Fixtures.channel(channel, lastMessageAt: 40_000)])
        let messages: any MessageSource<ChatMessage> = server
        let channels: any ChannelSource<ChatChannel> = server

        let collection = try MessageCollection(
            channelURL: channel, store: cache.messages, source: messages as any MessageSource<ChatMessage>, pageSize: 10)
        let list = try ChannelListCollection(store: cache.channels, source: channels)
        try await collection.start()
        try await collection.loadPrevious()
        try await list.start()

        #expect(await collection.messages.map(\.messageID) == Array(21...40))
        #expect(await list.channels.map(\.channelURL) == [channel])
    }

    @Test func cancellingSyncOrLoadPreviousThrowsCancellationError() async throws {
        // Given a started collection whose server then answers slowly
        let cache = try await Cache.open(directory: folder.url)
        await server.send((1...40).map { message($0) })
        let collection = try MessageCollection(channelURL: channel, store: cache.messages, source: server, pageSize: 10)
        try await collection.start()
        await server.setLatency(.seconds(30))

        // When a sync and a loadPrevious are cancelled while the server answers
        for call in ["sync", "loadPrevious"] {
            let task = Task {
                if call == "sync" { try await collection.sync() } else { try await collection.loadPrevious() }
            }
            try await Task.sleep(for: .milliseconds(50))
            task.cancel()

            // Then each throws CancellationError, not a source failure
            await #expect(throws: CancellationError.self, "\(call)") { try await task.value }
        }
    }

    /// A call waiting in line behind another that waits for a slow server leaves the line when
    /// its task is cancelled (without it, it waited the other call's 120 s answer).
    @Test func aCallWaitingItsTurnLeavesTheLineWhenCancelled() async throws {
        let cache = try await Cache.open(directory: folder.url)
        await server.send((1...40).map { message($0) })
        let collection = try MessageCollection(channelURL: channel, store: cache.messages, source: server, pageSize: 10)
        try await collection.start()
        await server.setLatency(.seconds(120))
        let slow = Task { try await collection.sync() }
        try await Task.sleep(for: .milliseconds(50))
        let waiting = Task { try await collection.loadPrevious() }
        try await Task.sleep(for: .milliseconds(50))
        let cancelled = ContinuousClock.now
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        #expect(ContinuousClock.now - cancelled < .seconds(60))
        // The line goes on: the slow call still has its turn, and the next waits behind it.
        slow.cancel()
        await #expect(throws: CancellationError.self) { try await slow.value }
        await server.setLatency(.zero)
        try await collection.loadPrevious()
        #expect(await collection.messages.count == 20)
    }

    @Test func cancellingAChannelListSyncThrowsCancellationError() async throws {
        let cache = try await Cache.open(directory: folder.url)
        let list = try ChannelListCollection(store: cache.channels, source: server)
        await server.setLatency(.seconds(30))
        let task = Task { try await list.start() }
        try await Task.sleep(for: .milliseconds(50))
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
    }

    @Test func cancellingAUserLookupThrowsCancellationErrorAtOnce() async throws {
        // Given a directory whose server answers in 120 s
        let cache = try await Cache.open(directory: folder.url)
        await server.add(users: [ChatUser(userID: "ann", nickname: "Ann")])
        await server.setLatency(.seconds(120))
        let directory = UserDirectory(users: cache.users, source: server)

        // When a lookup that waits for the server is cancelled
        let lookup = Task { try await directory.users(withIDs: ["ann"]) }
        try await Task.sleep(for: .milliseconds(50))
        let cancelled = ContinuousClock.now
        lookup.cancel()

        // Then it throws CancellationError without waiting for the fetch
        await #expect(throws: CancellationError.self) { try await lookup.value }
        // (well before the answer: a loaded machine took 6.8 s to get here once)
        #expect(ContinuousClock.now - cancelled < .seconds(60))
    }
}
