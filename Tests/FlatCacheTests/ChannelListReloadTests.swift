import Foundation
import Testing

@testable import FlatCache
import FlatCacheTesting

/// A whole-list load of the channel list against a list that moves between
/// its offset pages: a channel missing from the pages is gone only when the
/// server says so.
@Suite struct ChannelListReloadTests {
    typealias Cache = ChatCache<ChatMessage, ChatChannel, ChatUser>

    let folder = try! TemporaryFolder()
    let server = SimulatedChatServer()
    /// Channels on the server and in the cache; three pages and a bit.
    let count = 120
    let pageSize = 50

    func url(_ index: Int) -> String { "channel-\(index)" }

    /// A cache holding the server's channels from an earlier run, a message
    /// in each, and a channel the user left since ("gone"), with no change
    /// log token: starting a list loads it whole.
    func cacheAndServer() async throws -> Cache {
        let cache = try ChatCache(directory: folder.url, configuration: Configuration(writeDelay: .zero, sizeLimit: nil))
        // Index 0 is the newest.
        let channels = (0..<count).map { ChannelListCollectionTests.channel(url($0), lastAt: Int64(count - $0) * 1_000) }
        await server.update(channels: channels)
        try await cache.channels.save(channels + [ChannelListCollectionTests.channel("gone", lastAt: 500)])
        for url in (0..<count).map(url) + ["gone"] {
            try await cache.messages.save([ChatMessage(messageID: 1, channelURL: url, createdAt: 1, text: "hi")])
        }
        return cache
    }

    /// Sends a message to the channel: it moves to the top of the list.
    static func moveUp(_ url: String, on server: SimulatedChatServer, at time: Int64) async {
        await server.send([ChatMessage(messageID: time, channelURL: url, createdAt: time, text: "new")])
    }

    func list(_ cache: Cache, _ source: ShiftingChannels) throws -> ChannelListCollection<ChatChannel> {
        try ChannelListCollection(store: cache.channels, source: source, pageSize: pageSize)
    }

    @Test func aChannelMovedUpBetweenPagesKeepsItsMessagesAndAChannelLeftStillGoes() async throws {
        // Given a channel on the second page that a new message moves to the top right after the first page
        let cache = try await cacheAndServer()
        let moved = url(pageSize + 10)
        let source = ShiftingChannels(server) { server, page in
            if page == 1 { await Self.moveUp(moved, on: server, at: 1_000_000) }
        }

        // When the list loads whole
        let list = try list(cache, source)
        try await list.start()

        // Then the moved channel is listed, first, and kept its messages
        let cached = try await cache.channels.load()
        #expect(cached.first?.channelURL == moved)
        #expect(cached.count == count)
        #expect(try await cache.messages.loadIfCached(in: moved) != nil)
        // and the channel the server no longer lists went, with its messages
        #expect(!cached.contains { $0.channelURL == "gone" })
        #expect(try await cache.messages.loadIfCached(in: "gone") == nil)
        #expect(await list.channels.count == count)
        #expect(try await cache.channels.changeLogToken() != nil)
    }

    @Test func aChannelLeftAboveTheCursorMakesNoOtherChannelLookGone() async throws {
        // Given a channel of the first page left right after it: the second page starts one further
        let cache = try await cacheAndServer()
        let left = url(10)
        let skipped = url(pageSize)
        let source = ShiftingChannels(server) { server, page in
            if page == 1 { await server.leave(channelURL: left) }
        }

        let list = try list(cache, source)
        try await list.start()

        // Then the channel the second page skipped is kept with its messages; the one left is gone
        let cached = try await cache.channels.load()
        #expect(cached.contains { $0.channelURL == skipped })
        #expect(try await cache.messages.loadIfCached(in: skipped) != nil)
        #expect(!cached.contains { $0.channelURL == left })
        #expect(try await cache.messages.loadIfCached(in: left) == nil)
        #expect(try await cache.messages.loadIfCached(in: "gone") == nil)
        #expect(cached.count == count - 1)
    }

    @Test func aListThatNeverHoldsStillKeepsWhatItCannotConfirmUntilALoadDoes() async throws {
        // Given a list where, after every page, the channel in the middle of the second page moves up
        let cache = try await cacheAndServer()
        let shifting = Shifting()
        let source = ShiftingChannels(server) { [pageSize] server, page in
            guard await shifting.isOn else { return }
            let list = await server.channelList()
            await Self.moveUp(list[pageSize + 10].channelURL, on: server, at: 1_000_000 + Int64(page))
        }
        let list = try list(cache, source)

        // When it loads whole while the list keeps moving
        try await list.start()

        // Then nothing is taken for gone by its absence: the channel left stays, with its messages
        #expect(try await cache.channels.load().contains { $0.channelURL == "gone" })
        #expect(try await cache.messages.loadIfCached(in: "gone") != nil)
        #expect(try await cache.messages.loadIfCached(in: url(pageSize + 10)) != nil)
        #expect(try await cache.channels.changeLogToken() == nil)
        let loads = await server.calls.filter { if case .channels(nil, _) = $0 { true } else { false } }.count
        #expect(loads == ChannelListCollection<ChatChannel>.maxWholeListLoads)

        // When the list holds still and the app syncs again
        await shifting.stop()
        try await list.sync()

        // Then the load confirms it: the channel left goes, every other one stays
        let cached = try await cache.channels.load()
        #expect(!cached.contains { $0.channelURL == "gone" })
        #expect(try await cache.messages.loadIfCached(in: "gone") == nil)
        #expect(cached.count == count)
        for index in 0..<count { #expect(try await cache.messages.loadIfCached(in: url(index)) != nil) }
        #expect(try await cache.channels.changeLogToken() != nil)
    }
}

/// Whether a ``ShiftingChannels`` hook still moves the list.
actor Shifting {
    private(set) var isOn = true
    func stop() { isOn = false }
}

/// The simulated server's channel list, with `afterPage` run after each
/// page it answers (given how many it answered): a list that changes
/// between the pages of one load, as a busy server's does.
struct ShiftingChannels: ChannelSource {
    let server: SimulatedChatServer
    let afterPage: @Sendable (SimulatedChatServer, Int) async -> Void
    private let pages = PageCount()

    init(_ server: SimulatedChatServer, afterPage: @escaping @Sendable (SimulatedChatServer, Int) async -> Void) {
        self.server = server
        self.afterPage = afterPage
    }

    func channels(from cursor: String?, limit: Int) async throws -> ChannelPage<ChatChannel> {
        let page = try await server.channels(from: cursor, limit: limit)
        await afterPage(server, await pages.next())
        return page
    }

    func channelChangeLogToken() async throws -> String { try await server.channelChangeLogToken() }

    func channelChangeLog(since token: String) async throws -> ChannelChangeLog<ChatChannel> {
        try await server.channelChangeLog(since: token)
    }

    func channelEvents() async -> AsyncStream<ChannelEvent<ChatChannel>> { AsyncStream { $0.finish() } }

    private actor PageCount {
        private var count = 0
        func next() -> Int {
            count += 1
            return count
        }
    }
}
