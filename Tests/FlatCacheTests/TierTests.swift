import Foundation
import Testing

@testable import FlatCache

/// Per-call tiers: `store.using(.memory)`, `.disk` and `.memoryAndDisk`.
@Suite struct TierTests {
    let folder = try! TemporaryFolder()
    static let url = Fixtures.channelURL

    /// A cache whose write-behind waits an hour: only an explicit write reaches the disk.
    func open(memoryLimit: Int = Configuration.defaultMemoryLimit, readOnly: Bool = false) throws -> ChatCache<ChatMessage, ChatChannel, ChatUser> {
        try ChatCache(directory: folder.url, configuration: Configuration(
            memoryLimit: memoryLimit, writeDelay: .seconds(3_600), readOnly: readOnly, sizeLimit: nil))
    }

    var messageFile: URL {
        folder.appending(try! CacheFolderSummary.messagesFilePath(forChannel: Self.url))
    }

    func onDisk() throws -> [ChatMessage]? {
        try ChatCache(directory: folder.url, configuration: Configuration(readOnly: true)).messages.loadIfCachedNow(in: Self.url)
    }

    @Test func aMemoryOnlyLoadNeverReadsAFile() async throws {
        try open().messages.replaceNow(Fixtures.messages(3), in: Self.url)
        let cache = try open()
        let memory = cache.messages.using(.memory)
        #expect(try await memory.loadIfCached(in: Self.url) == nil)
        #expect(try await memory.loadLatest(in: Self.url, limit: 2).isEmpty)
        var statistics = try await cache.statistics()
        #expect(statistics.diskHits == 0 && statistics.diskMisses == 0 && statistics.memoryMisses == 2)
        // Once a load that may read kept it, memory answers.
        #expect(try await cache.messages.load(in: Self.url).count == 3)
        #expect(try await memory.loadIfCached(in: Self.url) == Fixtures.messages(3))
        #expect(try await memory.loadLatest(in: Self.url, limit: 2).map(\.messageID) == [2, 3])
        statistics = try await cache.statistics()
        #expect(statistics.diskHits == 1 && statistics.memoryHits == 2)
    }

    @Test func aMemoryOnlySaveIsSeenByLoadsButNeverWritten() async throws {
        let cache = try open()
        try cache.messages.replaceNow(Fixtures.messages(3), in: Self.url)
        let before = try Data(contentsOf: messageFile)
        let draft = Fixtures.message(4, at: 4_000, text: "only in memory")
        try await cache.messages.using(.memory).save([draft])
        #expect(try await cache.messages.load(in: Self.url) == Fixtures.messages(3) + [draft])
        #expect(try await cache.messages.using(.memory).load(in: Self.url).last == draft)
        // Not on disk, not even after a flush or close, and not seen by a disk-only load.
        try await cache.close()
        #expect(try Data(contentsOf: messageFile) == before)
        #expect(try await cache.messages.using(.disk).load(in: Self.url) == Fixtures.messages(3))
        #expect(try onDisk() == Fixtures.messages(3))
        // A save that writes the file ends it.
        let sent = Fixtures.message(5, at: 5_000)
        try await cache.messages.save([sent])
        #expect(try await cache.messages.load(in: Self.url) == Fixtures.messages(3) + [sent])
        try await cache.flush()
        #expect(try onDisk() == Fixtures.messages(3) + [sent])
    }

    /// Issue 31, finding 6: `CacheTier.memory` says a memory-only save changes what this cache's
    /// loads return; into a channel never loaded, a memory-only load missed it.
    @Test func aMemoryOnlySaveIntoAChannelNeverLoadedIsSeenByMemoryOnlyLoads() async throws {
        try open().messages.replaceNow(Fixtures.messages(3), in: Self.url)
        let before = try Data(contentsOf: messageFile)
        let cache = try open()
        let memory = cache.messages.using(.memory)
        let draft = Fixtures.message(4, at: 4_000, text: "only in memory")
        try await memory.save([draft])
        #expect(try await memory.loadIfCached(in: Self.url) == Fixtures.messages(3) + [draft])
        #expect(try await memory.loadLatest(in: Self.url, limit: 2).map(\.messageID) == [3, 4])
        #expect(try cache.messages.using(.memory).loadIfCachedNow(in: Self.url) == Fixtures.messages(3) + [draft])
        #expect(try Data(contentsOf: messageFile) == before)
        // The blocking twin, into a channel with no file at all.
        let other = "sendbird_group_channel_never_cached"
        let first = ChatMessage(messageID: 7, channelURL: other, createdAt: 7_000, text: "draft")
        try cache.messages.using(.memory).saveNow([first])
        #expect(try await memory.loadIfCached(in: other) == [first])
        try await cache.close()
        #expect(try ChatCache<ChatMessage, ChatChannel, ChatUser>(directory: folder.url).messages.loadIfCachedNow(in: other) == nil)
    }

    @Test func aMemoryOnlyChangeLeavesWithItsFileUnderMemoryPressure() async throws {
        let cache = try open(memoryLimit: 0)
        try cache.messages.replaceNow(Fixtures.messages(3), in: Self.url)
        try await cache.messages.using(.memory).save([Fixtures.message(4, at: 4_000)])
        #expect(try await cache.messages.load(in: Self.url) == Fixtures.messages(3))
    }

    @Test func aMemoryOnlySaveWorksOnAReadOnlyCache() async throws {
        try open().messages.replaceNow(Fixtures.messages(2), in: Self.url)
        let cache = try open(readOnly: true)
        let before = try Data(contentsOf: messageFile)
        try await cache.messages.using(.memory).save([Fixtures.message(3, at: 3_000)])
        try cache.users.using(.memory).saveNow([Fixtures.mina])
        #expect(try await cache.messages.load(in: Self.url).count == 3)
        #expect(try cache.users.loadNow() == [Fixtures.mina])
        await #expect(throws: FlatCacheError.self) { try await cache.messages.save([Fixtures.message(4, at: 4_000)]) }
        #expect(try Data(contentsOf: messageFile) == before)
        #expect(!FileManager.default.fileExists(atPath: folder.appending("users.lines").path))
    }

    @Test func aDiskOnlySaveIsWrittenBeforeItReturnsAndKeptOutOfMemory() async throws {
        let cache = try open()
        let disk = cache.messages.using(.disk)
        try await disk.replace(Fixtures.messages(3), in: Self.url)
        #expect(try onDisk() == Fixtures.messages(3))
        #expect(try await cache.statistics().memoryEntries == 0)
        try disk.saveNow([Fixtures.message(4, at: 4_000)])
        #expect(try onDisk() == Fixtures.messages(4))
        #expect(try await cache.statistics().memoryEntries == 0)
        try cache.channels.using(.disk).replaceNow(with: [Fixtures.channel(Self.url, lastMessageAt: 4_000)])
        #expect(FileManager.default.fileExists(atPath: folder.appending("channels.lines").path))
        #expect(try await cache.statistics().memoryEntries == 0)
    }

    @Test func aDiskOnlyLoadWritesWaitingChangesFirstAndKeepsNothing() async throws {
        let cache = try open()
        try cache.messages.replaceNow(Fixtures.messages(3), in: Self.url)
        try await cache.messages.save([Fixtures.message(4, at: 4_000)])  // waits an hour for write-behind
        #expect(try onDisk() == Fixtures.messages(3))
        let memoryBefore = try await cache.statistics()
        #expect(try await cache.messages.using(.disk).load(in: Self.url) == Fixtures.messages(4))
        #expect(try onDisk() == Fixtures.messages(4))
        // Another process's write is read by a disk-only load, page or whole.
        _ = try open().messages.saveNow([Fixtures.message(5, at: 5_000)])
        #expect(try await cache.messages.using(.disk).loadLatest(in: Self.url, limit: 2).map(\.messageID) == [4, 5])
        let statistics = try await cache.statistics()
        #expect(statistics.memoryHits == memoryBefore.memoryHits)
        // Each disk-only load read the disk, the page as the whole: neither asked memory.
        #expect(statistics.diskHits == memoryBefore.diskHits + 2 && statistics.memoryMisses == memoryBefore.memoryMisses)
    }

    @Test func aPageReadFromTheFileCountsAsALoadThatReadTheDisk() async throws {
        try open().messages.replaceNow(Fixtures.messages(3), in: Self.url)
        let cache = try open()
        // A first page of a channel memory does not hold reads only its end: still a load from disk.
        #expect(try await cache.messages.loadLatest(in: Self.url, limit: 2).map(\.messageID) == [2, 3])
        #expect(try await cache.messages.using(.disk).loadLatest(in: Self.url, limit: 1).map(\.messageID) == [3])
        #expect(try await cache.messages.loadLatest(in: "never-cached", limit: 2).isEmpty)
        let statistics = try await cache.statistics()
        #expect(statistics.memoryMisses == 2 && statistics.diskHits == 2 && statistics.diskMisses == 1, "\(statistics)")
    }

    @Test func channelsAndUsersTakeTiersToo() async throws {
        let cache = try open()
        let channel = Fixtures.channel("a", lastMessageAt: 1)
        try await cache.channels.using(.memory).save([channel])
        try await cache.users.using(.memory).save([Fixtures.mina])
        #expect(try await cache.channels.load() == [channel])
        #expect(try await cache.users.user(withID: "mina") == Fixtures.mina)
        try await cache.close()
        #expect(!FileManager.default.fileExists(atPath: folder.appending("channels.lines").path))
        #expect(try await open().channels.using(.disk).load().isEmpty)
        #expect(cache.channels.using(.disk).tier == .disk)
        #expect(cache.channels.tier == .memoryAndDisk)
    }
}
