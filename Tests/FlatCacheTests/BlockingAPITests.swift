import FlatCache
import Foundation
import Testing

/// The public blocking API (`.blocking` on the stores and the cache), as an
/// app or tool sees it (no `@testable`), and its `async` twins: the same
/// names, the same results on equal inputs.
@Suite struct BlockingAPITests {
    let folder: TemporaryFolder

    init() throws {
        folder = try TemporaryFolder()
    }

    private static let url = Fixtures.channelURL
    private static let group = Fixtures.channel(url, lastMessageAt: 3_000)
    private static let other = Fixtures.channel("other", lastMessageAt: 1_000)

    @Test func everyBlockingCallReadsAndWritesBeforeItReturns() throws {
        let cache = try ChatCache(directory: folder.appending("cache"))
        let messages = cache.messages.blocking, channels = cache.channels.blocking, users = cache.users.blocking
        let five = Fixtures.messages(5)

        #expect(try messages.save(five) == SaveResult(filesWritten: 1))
        #expect(try messages.load(in: Self.url) == five)
        #expect(try messages.loadIfCached(in: Self.url) == five)
        #expect(try messages.loadIfCached(in: "never") == nil)
        #expect(try messages.loadLatest(in: Self.url, limit: 2) == Array(five.suffix(2)))
        #expect(try messages.load(in: Self.url, before: 3_000, limit: 5) == Array(five.prefix(2)))
        #expect(try messages.load(in: Self.url, before: 3_000, limit: 5, inclusive: true) == Array(five.prefix(3)))
        #expect(try messages.load(in: Self.url, after: 3_000, limit: 1) == [five[3]])
        #expect(try messages.load(in: Self.url, before: five[2], limit: 1) == [five[1]])
        #expect(try messages.load(in: Self.url, after: five[2], limit: 5) == Array(five.suffix(2)))
        #expect(try messages.applyChangeLog(updated: [], deletedMessageIDs: [5], in: Self.url) == SaveResult(filesWritten: 1))
        #expect(try messages.replace(Array(five.prefix(2)), in: Self.url) == SaveResult(filesWritten: 1))
        #expect(try messages.replace(five, in: Self.url, covering: 1_000...5_000) == SaveResult(filesWritten: 1))
        try messages.setChangeLogToken("t1", in: Self.url)
        #expect(try messages.continuity(in: Self.url) == ChannelContinuity(completeRanges: [1_000...5_000], changeLogToken: "t1"))
        #expect(try messages.loadAll() == five)
        try messages.removeAll(in: Self.url)
        #expect(try messages.loadIfCached(in: Self.url) == nil)

        #expect(try channels.save([Self.group]) == SaveResult(filesWritten: 1))
        #expect(try channels.replace(with: [Self.group, Self.other]) == SaveResult(filesWritten: 1))
        #expect(try channels.load() == [Self.group, Self.other])
        #expect(try channels.load(order: .oldestFirst) == [Self.other, Self.group])
        #expect(try channels.channel(withURL: "other") == Self.other)
        try channels.setChangeLogToken("list-1")
        #expect(try channels.changeLogToken() == "list-1")
        try channels.remove(channelURL: "other")
        #expect(try channels.load() == [Self.group])

        #expect(try users.save([Fixtures.mina]) == SaveResult(filesWritten: 1))
        #expect(try users.load() == [Fixtures.mina])
        #expect(try users.user(withID: "mina") == Fixtures.mina)
        try users.remove(userIDs: ["mina"])
        #expect(try users.load() == [])

        let whole = cache.blocking
        try messages.save(five)
        #expect(try whole.flush() == SaveResult())   // the blocking save wrote it already
        try whole.close()
        #expect(try whole.sweep().evictedChannels == 0)
        #expect(try whole.statistics().messages == 5)
        var checked = 0
        let files = try whole.verify { done, _ in checked = done }
        #expect(!files.isEmpty && files.allSatisfy(\.isValid) && checked == files.count)
        let migrated: ChatCache<ChatMessage, ChatChannel, ChatUser> = try whole.migrate(
            message: { $0.channelURL == Self.url ? $0 : nil }, channel: { $0 }, user: { $0 })
        #expect(try migrated.messages.blocking.load(in: Self.url) == five)
        try migrated.blocking.removeAll()
        #expect(try migrated.messages.blocking.loadAll() == [] && migrated.channels.blocking.load() == [])
    }

    /// Every `async` call and its blocking twin, on two caches given the same
    /// calls: equal results (with `writeDelay: .zero` an `async` save writes
    /// before it returns, so it counts its files as the blocking one does).
    /// Runs in a nonisolated `async` context, where `try await` picks the `async` form.
    @Test func asyncAndBlockingTwinsReturnEqualResultsOnEqualInputs() async throws {
        let configuration = Configuration(maxMessagesPerChannel: 4, writeDelay: .zero)
        let blocking = try ChatCache(directory: folder.appending("blocking"), configuration: configuration)
        let async = try await ChatCache.open(directory: folder.appending("async"), configuration: configuration)
        let unsent = Fixtures.message(0, at: 9_000)
        let six = Fixtures.messages(6) + [unsent]

        #expect(try await async.messages.save(six) == blocking.messages.blocking.save(six))
        #expect(try await async.messages.save(six) == blocking.messages.blocking.save(six))   // unchanged now
        #expect(try await async.messages.load(in: Self.url) == blocking.messages.blocking.load(in: Self.url))
        #expect(try await async.messages.loadIfCached(in: "never") == blocking.messages.blocking.loadIfCached(in: "never"))
        #expect(try await async.messages.loadLatest(in: Self.url, limit: 2) == blocking.messages.blocking.loadLatest(in: Self.url, limit: 2))
        #expect(
            try await async.messages.load(in: Self.url, before: 5_000, limit: 1)
                == blocking.messages.blocking.load(in: Self.url, before: 5_000, limit: 1))
        #expect(
            try await async.messages.load(in: Self.url, after: 3_000, limit: 1, inclusive: true)
                == blocking.messages.blocking.load(in: Self.url, after: 3_000, limit: 1, inclusive: true))
        let third = Fixtures.message(3, at: 3_000)
        #expect(
            try await async.messages.load(in: Self.url, before: third, limit: 9)
                == blocking.messages.blocking.load(in: Self.url, before: third, limit: 9))
        #expect(
            try await async.messages.load(in: Self.url, after: third, limit: 9)
                == blocking.messages.blocking.load(in: Self.url, after: third, limit: 9))
        #expect(
            try await async.messages.applyChangeLog(updated: [unsent], deletedMessageIDs: [6], in: Self.url)
                == blocking.messages.blocking.applyChangeLog(updated: [unsent], deletedMessageIDs: [6], in: Self.url))
        #expect(try await async.messages.replace(six, in: Self.url) == blocking.messages.blocking.replace(six, in: Self.url))
        #expect(
            try await async.messages.replace(six.prefix(2), in: Self.url, covering: 1_000...3_000)
                == blocking.messages.blocking.replace(six.prefix(2), in: Self.url, covering: 1_000...3_000))
        try await async.messages.setChangeLogToken("t", in: Self.url)
        try blocking.messages.blocking.setChangeLogToken("t", in: Self.url)
        #expect(try await async.messages.continuity(in: Self.url) == blocking.messages.blocking.continuity(in: Self.url))
        #expect(try await async.messages.loadAll() == blocking.messages.blocking.loadAll())

        let open = Fixtures.channel("open", lastMessageAt: 1, kind: .open)
        #expect(try await async.channels.save([Self.group, open]) == blocking.channels.blocking.save([Self.group, open]))
        #expect(
            try await async.channels.replace(with: [Self.group, Self.other])
                == blocking.channels.blocking.replace(with: [Self.group, Self.other]))
        #expect(try await async.channels.load(order: .oldestFirst) == blocking.channels.blocking.load(order: .oldestFirst))
        #expect(try await async.channels.channel(withURL: "other") == blocking.channels.blocking.channel(withURL: "other"))
        try await async.channels.setChangeLogToken("l")
        try blocking.channels.blocking.setChangeLogToken("l")
        #expect(try await async.channels.changeLogToken() == blocking.channels.blocking.changeLogToken())
        try await async.channels.remove(channelURL: "other")
        try blocking.channels.blocking.remove(channelURL: "other")

        #expect(try await async.users.save([Fixtures.mina]) == blocking.users.blocking.save([Fixtures.mina]))
        #expect(try await async.users.user(withID: "mina") == blocking.users.blocking.user(withID: "mina"))
        try await async.users.remove(userIDs: ["nobody"])
        try blocking.users.blocking.remove(userIDs: ["nobody"])
        #expect(try await async.users.load() == blocking.users.blocking.load())

        #expect(try await async.flush() == blocking.blocking.flush())
        try await async.close()
        try blocking.blocking.close()
        #expect(try await async.sweep() == blocking.blocking.sweep())
        let (asyncStatistics, blockingStatistics) = (try await async.statistics(), try blocking.blocking.statistics())
        #expect(asyncStatistics.messages == blockingStatistics.messages && asyncStatistics.channels == blockingStatistics.channels)
        #expect(try await async.verify().map(\.path) == blocking.blocking.verify().map(\.path))
        #expect(try await async.verify(repair: true).allSatisfy(\.isValid))
        let migratedAsync = try await async.migrate(message: { $0 }, channel: { $0 }, user: { _ -> ChatUser? in nil })
        let migratedBlocking = try blocking.blocking.migrate(message: { $0 }, channel: { $0 }, user: { _ -> ChatUser? in nil })
        #expect(try await migratedAsync.messages.loadAll() == migratedBlocking.messages.blocking.loadAll())
        #expect(try await migratedAsync.users.load() == [])
        try await migratedAsync.removeAll()
        try migratedBlocking.blocking.removeAll()
        #expect(try await migratedAsync.channels.load() == migratedBlocking.channels.blocking.load())
    }

    /// With write-behind an `async` save returns before its file is written,
    /// and its result says so: the file counted as scheduled, not written;
    /// records left out counted at once; the flush then counts the write.
    @Test func anAsyncSaveCountsTheFilesItLeftToWriteBehind() async throws {
        let cache = try await ChatCache.open(
            directory: folder.appending("cache"), configuration: Configuration(writeDelay: .seconds(60)))
        let saved = try await cache.messages.save(Fixtures.messages(3) + [Fixtures.message(0, at: 1)])
        #expect(saved == SaveResult(filesScheduled: 1, recordsLeftOut: 1))
        #expect(saved.description == "0 files written, 0 unchanged, 1 scheduled, 1 left out, 0 dropped")
        #expect(try await cache.channels.save([Self.group, Self.other]) == SaveResult(filesScheduled: 1))
        #expect(try await cache.users.save([Fixtures.mina]) == SaveResult(filesScheduled: 1))
        let reader = try ChatCache(directory: folder.appending("cache"))
        #expect(try reader.messages.blocking.loadIfCached(in: Self.url) == nil)   // not on disk yet
        #expect(try await cache.flush() == SaveResult(filesWritten: 3))
        #expect(try reader.messages.blocking.load(in: Self.url) == Fixtures.messages(3))
        #expect(try await cache.messages.using(.disk).save(Fixtures.messages(2)) == SaveResult(filesUnchanged: 1))
        #expect(try await cache.messages.using(.memory).save(Fixtures.messages(4)) == SaveResult())   // never written
    }
}
