import Foundation
import Testing

@testable import FlatCache
import FlatCacheTesting

/// The window between `start()` and the channel list's live subscription
/// opening: no change made around `start()` may wait for a later `sync()`.
@Suite struct ChannelListLiveWindowTests {
    let folder = try! TemporaryFolder()
    let server = SimulatedChatServer()

    static func channel(_ url: String, lastAt: Int64) -> ChatChannel {
        ChatChannel(
            channelURL: url, kind: .group, name: url.capitalized, memberCount: 2, createdAt: 0,
            lastMessage: ChatMessage(messageID: lastAt, channelURL: url, createdAt: lastAt, text: "last"))
    }

    @Test func aChannelJoinedWhileTheSubscriptionOpensSlowlyIsNotLost() async throws {
        let cache = try ChatCache<ChatMessage, ChatChannel, ChatUser>(
            directory: folder.url, configuration: Configuration(writeDelay: .zero, sizeLimit: nil))
        await server.update(channels: [Self.channel("a", lastAt: 1_000), Self.channel("b", lastAt: 2_000)])
        let gate = Gate()
        let list = try ChannelListCollection(store: cache.channels, source: SlowToSubscribeChannels(server: server, gate: gate))
        let returned = Flag()
        let starting = Task {
            try await list.start()
            returned.set()
        }

        // While the source opens its subscription, start() must not return (given time to)
        for _ in 0..<500 where await !gate.wasAsked { try await Task.sleep(for: .milliseconds(10)) }
        #expect(await gate.wasAsked)
        for _ in 0..<30 where !returned.isSet { try await Task.sleep(for: .milliseconds(10)) }
        #expect(!returned.isSet, "start() returned before the live subscription was open")
        // and a channel joined in that window comes by the sync start() runs after it opens
        await server.update(channels: [Self.channel("c", lastAt: 3_000)])
        await gate.open()
        try await starting.value
        // and one joined right after start() returns comes live
        await server.update(channels: [Self.channel("d", lastAt: 4_000)])

        for _ in 0..<500 where await list.channels.count < 4 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(await list.channels.map(\.channelURL) == ["d", "c", "b", "a"])
        #expect(try await cache.channels.load().map(\.channelURL) == ["d", "c", "b", "a"])
        await list.dispose()
    }
}

/// A channel source whose live subscription takes a while to open:
/// `channelEvents()` returns once the test opens the gate, subscribed from then on.
private struct SlowToSubscribeChannels: ChannelSource {
    let server: SimulatedChatServer
    let gate: Gate

    func channels(from cursor: String?, limit: Int) async throws -> ChannelPage<ChatChannel> {
        try await server.channels(from: cursor, limit: limit)
    }

    func channelChangeLogToken() async throws -> String { try await server.channelChangeLogToken() }

    func channelChangeLog(since token: String) async throws -> ChannelChangeLog<ChatChannel> {
        try await server.channelChangeLog(since: token)
    }

    func channelEvents() async -> AsyncStream<ChannelEvent<ChatChannel>> {
        await gate.pass()
        return await server.channelEvents()
    }
}
