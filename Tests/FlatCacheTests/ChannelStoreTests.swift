import FlatCache
import Foundation
import Testing

@Suite struct ChannelStoreTests {
    let folder: TemporaryFolder
    let cache: ChatCache<ChatMessage, ChatChannel, ChatUser>

    init() throws {
        folder = try TemporaryFolder()
        cache = try ChatCache(directory: folder.url)
    }

    @Test func loadsNewestLastMessageFirst() throws {
        try cache.channels.blocking.replace(with: [
            Fixtures.channel("b", lastMessageAt: 10), Fixtures.channel("c", lastMessageAt: 30),
            Fixtures.channel("a", lastMessageAt: 20), Fixtures.channel("d", lastMessageAt: 20),
        ])
        #expect(try cache.channels.blocking.load().map(\.channelURL) == ["c", "a", "d", "b"])
        #expect(try cache.channels.blocking.load(order: .oldestFirst).map(\.channelURL) == ["b", "a", "d", "c"])
    }

    @Test func neverCachesAnOpenChannel() throws {
        let result = try cache.channels.blocking.replace(with: [
            Fixtures.channel("group", lastMessageAt: 1), Fixtures.channel("open", lastMessageAt: 2, kind: .open),
        ])
        #expect(result == SaveResult(filesWritten: 1, recordsLeftOut: 1))
        #expect(try cache.channels.blocking.load().map(\.channelURL) == ["group"])
        #expect(try cache.channels.blocking.save([Fixtures.channel("open", lastMessageAt: 3, kind: .open)]).recordsLeftOut == 1)
        #expect(try cache.channels.blocking.load().map(\.channelURL) == ["group"])
    }

    @Test func saveUpsertsAChangedChannelAndReorders() throws {
        try cache.channels.blocking.replace(with: [Fixtures.channel("a", lastMessageAt: 20), Fixtures.channel("b", lastMessageAt: 10)])
        // "channel changed": b got a new message
        try cache.channels.blocking.save([Fixtures.channel("b", lastMessageAt: 30, name: "B renamed")])
        let channels = try cache.channels.blocking.load()
        #expect(channels.map(\.channelURL) == ["b", "a"])
        #expect(channels.first?.name == "B renamed")
    }

    @Test func replaceDropsChannelsNoLongerListedButKeepsTheirMessages() throws {
        try cache.channels.blocking.replace(with: [Fixtures.channel("a", lastMessageAt: 1), Fixtures.channel("b", lastMessageAt: 2)])
        try cache.messages.blocking.save(Fixtures.messages(2, in: "a"))
        try cache.channels.blocking.replace(with: [Fixtures.channel("b", lastMessageAt: 2)])
        #expect(try cache.channels.blocking.load().map(\.channelURL) == ["b"])
        #expect(try cache.messages.blocking.load(in: "a").count == 2)
    }

    @Test func savingTheSameListSkipsTheWrite() throws {
        let list = [Fixtures.channel("a", lastMessageAt: 1), Fixtures.channel("b", lastMessageAt: 2)]
        try cache.channels.blocking.replace(with: list)
        #expect(try cache.channels.blocking.replace(with: list.reversed()) == SaveResult(filesUnchanged: 1))
        #expect(try cache.channels.blocking.save(list) == SaveResult(filesUnchanged: 1))
    }

    @Test func findsOneChannelByURL() throws {
        try cache.channels.blocking.replace(with: [Fixtures.channel("a", lastMessageAt: 1)])
        #expect(try cache.channels.blocking.channel(withURL: "a")?.channelURL == "a")
        #expect(try cache.channels.blocking.channel(withURL: "A") == nil)
    }

    @Test func removingAChannelRemovesItsMessages() throws {
        try cache.channels.blocking.replace(with: [Fixtures.channel("a", lastMessageAt: 1), Fixtures.channel("b", lastMessageAt: 2)])
        try cache.messages.blocking.save(Fixtures.messages(2, in: "a") + Fixtures.messages(2, in: "b"))
        try cache.channels.blocking.remove(channelURL: "a")
        #expect(try cache.channels.blocking.load().map(\.channelURL) == ["b"])
        #expect(try cache.messages.blocking.load(in: "a") == [])
        #expect(try cache.messages.blocking.load(in: "b").count == 2)
    }

    @Test func anEmptyChannelURLIsRejected() throws {
        #expect(throws: FlatCacheError.self) { try cache.channels.blocking.save([Fixtures.channel("", lastMessageAt: 1)]) }
        #expect(throws: FlatCacheError.self) { try cache.channels.blocking.remove(channelURL: "") }
    }
}
