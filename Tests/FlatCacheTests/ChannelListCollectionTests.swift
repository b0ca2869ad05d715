import Foundation
import Testing

@testable import FlatCache
import FlatCacheTesting

/// The channel list collection against the simulated server: the cached
/// list, then the server's; change logs and live changes by token; a
/// channel that goes takes its messages with it.
@Suite struct ChannelListCollectionTests {
    typealias Cache = ChatCache<ChatMessage, ChatChannel, ChatUser>
    typealias Event = ChannelListEvent<ChatChannel>

    let folder = try! TemporaryFolder()
    let server = SimulatedChatServer()

    static func channel(_ url: String, lastAt: Int64, name: String? = nil) -> ChatChannel {
        ChatChannel(
            channelURL: url, kind: .group, name: name ?? url.capitalized, memberCount: 2, createdAt: 0,
            lastMessage: ChatMessage(messageID: lastAt, channelURL: url, createdAt: lastAt, text: "last"))
    }

    func cache() throws -> Cache {
        try ChatCache(directory: folder.url, configuration: Configuration(writeDelay: .zero, sizeLimit: nil))
    }

    static func urls(_ channels: [ChatChannel]) -> [String] { channels.map(\.channelURL) }

    /// Describes an event in a word and a URL, for comparing sequences.
    static func describe(_ event: Event) -> String {
        switch event {
        case .cachedList(let list): "cached \(urls(list))"
        case .replaced(let list): "replaced \(urls(list))"
        case .added(let channel): "added \(channel.channelURL)"
        case .updated(let channel): "updated \(channel.channelURL)"
        case .moved(let channel): "moved \(channel.channelURL)"
        case .removed(let url): "removed \(url)"
        case .failed(let error): "failed \(error)"
        }
    }

    /// A started list of channels a-d, synced, with a message cached in each.
    func started(_ cache: Cache, pageSize: Int = 50) async throws -> (ChannelListCollection<ChatChannel>, EventLog<Event>) {
        await server.update(channels: ["a", "b", "c", "d"].enumerated().map { Self.channel($1, lastAt: Int64($0 + 1) * 1_000) })
        for url in ["a", "b", "c", "d"] {
            try await cache.messages.save([ChatMessage(messageID: 1, channelURL: url, createdAt: 1, text: "hi")])
        }
        let list = try ChannelListCollection(store: cache.channels, source: server, pageSize: pageSize)
        let log = EventLog(list.events)
        try await list.start()
        // Events reach the log on their own task: wait for the start's last one.
        try await log.wait { $0.contains { if case .replaced = $0 { true } else { false } } }
        return (list, log)
    }

    @Test func startShowsTheCachedListThenTheServersWholeListInPages() async throws {
        // Given a cached list with a channel the user has since left
        let cache = try cache()
        try await cache.channels.save([Self.channel("gone", lastAt: 9_000), Self.channel("b", lastAt: 500)])
        try await cache.messages.save([ChatMessage(messageID: 1, channelURL: "gone", createdAt: 1, text: "hi")])

        // When a list paging 3 at a time starts against a server with a-d
        let (list, log) = try await started(cache, pageSize: 3)

        // Then the cached list came first, then the server's, newest last message first
        try await log.wait { $0.count >= 2 }
        #expect(log.all.prefix(2).map(Self.describe) == ["cached [\"gone\", \"b\"]", "replaced [\"d\", \"c\", \"b\", \"a\"]"])
        #expect(await Self.urls(list.channels) == ["d", "c", "b", "a"])
        #expect(Self.urls(try await cache.channels.load()) == ["d", "c", "b", "a"])
        // and the channel that went took its messages with it
        #expect(try await cache.messages.loadIfCached(in: "gone") == nil)
        #expect(try await cache.channels.changeLogToken() != nil)
        #expect(await server.calls.filter { if case .channels = $0 { true } else { false } }.count == 2)
    }

    @Test func whileOfflineChangesArriveByChangeLogInCacheAndEvents() async throws {
        let cache = try cache()
        let (list, log) = try await started(cache)
        let before = log.all.count
        await server.setOffline(true)
        await server.update(channels: [Self.channel("a", lastAt: 1_000, name: "Renamed")])  // updated in place
        await server.send([ChatMessage(messageID: 9, channelURL: "b", createdAt: 9_000, text: "new")])  // moved up
        await server.leave(channelURL: "c")
        await server.deleteChannel("d")
        await server.update(channels: [Self.channel("e", lastAt: 5_000)])  // joined

        await server.setOffline(false)
        try await list.sync()

        try await log.wait { $0.count >= before + 5 }
        #expect(Set(log.all.dropFirst(before).map(Self.describe)) == ["updated a", "moved b", "removed c", "removed d", "added e"])
        #expect(await Self.urls(list.channels) == ["b", "e", "a"])
        #expect(Self.urls(try await cache.channels.load()) == ["b", "e", "a"])
        #expect(try await cache.channels.load().first { $0.channelURL == "a" }?.name == "Renamed")
        #expect(try await cache.messages.loadIfCached(in: "c") == nil)
        #expect(try await cache.messages.loadIfCached(in: "d") == nil)
        #expect(try await cache.messages.loadIfCached(in: "a") != nil)
    }

    @Test func liveChangesReachTheViewAndTheCache() async throws {
        let cache = try cache()
        let (list, log) = try await started(cache)
        let before = log.all.count

        await server.send([ChatMessage(messageID: 9, channelURL: "a", createdAt: 9_000, text: "new")])
        await server.leave(channelURL: "b")

        try await log.wait { $0.count >= before + 2 }
        #expect(log.all.dropFirst(before).map(Self.describe) == ["moved a", "removed b"])
        #expect(await Self.urls(list.channels) == ["a", "d", "c"])
        try await cache.flush()
        #expect(Self.urls(try await cache.channels.load()) == ["a", "d", "c"])
        #expect(try await cache.messages.loadIfCached(in: "b") == nil)
    }

    @Test func aTokenTooOldLoadsTheWholeListAgain() async throws {
        let cache = try cache()
        await server.setChangeLogLimits(retention: 2, pageSize: 100)
        let (list, log) = try await started(cache)
        await server.setOffline(true)
        await server.update(channels: ["x", "y", "z"].map { Self.channel($0, lastAt: 100) })

        await server.setOffline(false)
        try await list.sync()

        try await log.wait { $0.filter { if case .replaced = $0 { true } else { false } }.count == 2 }
        #expect(await Self.urls(list.channels) == ["d", "c", "b", "a", "x", "y", "z"])
    }

    @Test func aFailingSourceLeavesTheCachedListAndThrowsATypedError() async throws {
        let cache = try cache()
        let (list, _) = try await started(cache)
        let cached = try await cache.channels.load()
        let token = try await cache.channels.changeLogToken()
        await server.failNextCalls(1)

        await #expect {
            try await list.sync()
        } throws: { error in
            guard case FlatCacheError.sourceFailed = error else { return false }
            return true
        }

        #expect(try await cache.channels.load() == cached)
        #expect(try await cache.channels.changeLogToken() == token)
    }

    @Test func disposeStopsEvents() async throws {
        let cache = try cache()
        let (list, log) = try await started(cache)
        await list.dispose()
        // Events emitted before dispose() may still be on their way: the stream ends after them.
        try await log.wait { _ in log.isFinished }
        let count = log.all.count

        await server.leave(channelURL: "a")
        try await Task.sleep(for: .milliseconds(100))

        // Live events stopped: the channel left stays in the view and the cache.
        #expect(await Self.urls(list.channels) == ["d", "c", "b", "a"])
        #expect(Self.urls(try await cache.channels.load()) == ["d", "c", "b", "a"])
        #expect(log.all.count == count)
        await #expect(throws: FlatCacheError.self) { try await list.sync() }
    }

    @Test func replacingTheListWholeForgetsItsToken() async throws {
        let cache = try cache()
        _ = try await started(cache)
        #expect(try await cache.channels.changeLogToken() != nil)

        try await cache.channels.replace(with: [Self.channel("solo", lastAt: 1)])

        #expect(try await cache.channels.changeLogToken() == nil)
    }
}
