import Foundation
import Testing

@testable import FlatCache
import FlatCacheTesting

/// The window between `start()` and the live subscription opening: no
/// message sent around `start()` may wait for a later `sync()`.
@Suite struct MessageCollectionLiveWindowTests {
    typealias Cache = ChatCache<ChatMessage, ChatChannel, ChatUser>

    let folder = try! TemporaryFolder()
    let server = SimulatedChatServer()
    let channel = "trip"

    static func messages(_ ids: ClosedRange<Int64>) -> [ChatMessage] {
        ids.map { ChatMessage(messageID: $0, channelURL: "trip", createdAt: $0 * 1_000, text: "message \($0)") }
    }

    @Test func aMessageSentWhileTheSubscriptionOpensSlowlyIsNotLost() async throws {
        let cache = try ChatCache<ChatMessage, ChatChannel, ChatUser>(
            directory: folder.url, configuration: Configuration(writeDelay: .zero, sizeLimit: nil))
        await server.send(Self.messages(1...10))
        let gate = Gate()
        let collection = try MessageCollection(
            channelURL: channel, store: cache.messages, source: SlowToSubscribe(server: server, gate: gate))
        let returned = Flag()
        let starting = Task {
            try await collection.start()
            returned.set()
        }

        // While the source opens its subscription, start() must not return (given time to)
        for _ in 0..<500 where await !gate.wasAsked { try await Task.sleep(for: .milliseconds(10)) }
        #expect(await gate.wasAsked)
        for _ in 0..<30 where !returned.isSet { try await Task.sleep(for: .milliseconds(10)) }
        #expect(!returned.isSet, "start() returned before the live subscription was open")
        // and a message sent in that window comes by the sync start() runs after it opens
        await server.send(Self.messages(11...11))
        await gate.open()
        try await starting.value
        // and one sent right after start() returns comes live
        await server.send(Self.messages(12...12))

        for _ in 0..<500 where await collection.messages.last?.messageID != 12 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(await collection.messages.map(\.messageID) == Array(1...12))
        await collection.dispose()
    }

    @Test func aSourceThatOpensAtOnceDeliversEveryMessageSentDuringStart() async throws {
        // Zero latency: messages sent while start() runs, many in one millisecond
        let cache = try ChatCache<ChatMessage, ChatChannel, ChatUser>(
            directory: folder.url, configuration: Configuration(writeDelay: .zero, sizeLimit: nil))
        await server.send(Self.messages(1...5))
        let collection = try MessageCollection(channelURL: channel, store: cache.messages, source: server, pageSize: 100)
        let sending = Task {
            for id in Int64(6)...60 {
                await server.send([ChatMessage(messageID: id, channelURL: "trip", createdAt: 6_000, text: "burst \(id)")])
                await Task.yield()
            }
        }
        try await collection.start()
        await sending.value

        for _ in 0..<500 where await collection.messages.count < 60 { try await Task.sleep(for: .milliseconds(10)) }
        let ids = await collection.messages.map(\.messageID)
        #expect(ids == Array(1...60))
        await collection.dispose()
    }
}

/// A source whose live subscription takes a while to open: `liveEvents()`
/// returns once the test opens the gate, subscribed from then on.
private struct SlowToSubscribe: MessageSource {
    let server: SimulatedChatServer
    let gate: Gate

    func messages(in channelURL: String, _ direction: PageDirection, _ timestamp: Int64, limit: Int) async throws
        -> MessagePage<ChatMessage>
    {
        try await server.messages(in: channelURL, direction, timestamp, limit: limit)
    }

    func changeLogToken(in channelURL: String) async throws -> String { try await server.changeLogToken(in: channelURL) }

    func changeLog(in channelURL: String, since token: String) async throws -> MessageChangeLog<ChatMessage> {
        try await server.changeLog(in: channelURL, since: token)
    }

    func liveEvents() async -> AsyncStream<LiveEvent<ChatMessage>> {
        await gate.pass()
        return await server.liveEvents()
    }
}
