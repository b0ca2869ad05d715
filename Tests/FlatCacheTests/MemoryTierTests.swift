@testable import FlatCache
import Foundation
import Testing

/// The memory tier: a channel loaded or saved once is answered from memory,
/// without reading its file, until someone (another process, another
/// instance) writes the file or the tier's budget pushes it out.
@Suite struct MemoryTierTests {
    let folder: TemporaryFolder
    let url = Fixtures.channelURL

    init() throws {
        folder = try TemporaryFolder()
    }

    func cache(memoryLimit: Int = Configuration.defaultMemoryLimit) throws -> ChatCache<ChatMessage, ChatChannel, ChatUser> {
        try ChatCache(directory: folder.url, configuration: Configuration(memoryLimit: memoryLimit))
    }

    /// The `read` calls on message files of this test's folder while `body` runs. Message files
    /// only, which is what these tests are about: a sweep an earlier write set off reads
    /// `usage.lines` at its own pace. (CI once counted 8 reads of the whole folder in a window
    /// where the write reads no message file; 18 local runs did not show it again.)
    func reads<T>(_ body: () async throws -> T) async rethrows -> (result: T, reads: Int) {
        let messages = folder.url.path + "/messages/"
        FaultInjection.countReads(below: messages)
        defer { FaultInjection.stopCountingReads(below: messages) }
        let result = try await body()
        return (result, FaultInjection.readCount(below: messages))
    }

    @Test func theReadCounterSeesALoadFromDisk() async throws {
        // Given a channel saved by another instance
        try cache().messages.saveNow(Fixtures.messages(3))

        // When a fresh instance loads it
        let fresh = try cache()
        let (loaded, count) = try await reads { try fresh.messages.loadNow(in: url) }

        // Then the file was read
        #expect(loaded == Fixtures.messages(3))
        #expect(count > 0)
    }

    @Test func aSecondLoadFromMemoryReadsNoFile() async throws {
        // Given a channel saved and loaded once
        let cache = try cache()
        try cache.messages.saveNow(Fixtures.messages(3))
        _ = try cache.messages.loadNow(in: url)

        // When it is loaded again, synchronously and asynchronously
        let (again, syncReads) = try await reads { try cache.messages.loadNow(in: url) }
        let (asyncAgain, asyncReads) = try await reads { try await cache.messages.load(in: url) }

        // Then both came from memory: no file was read
        #expect(again == Fixtures.messages(3))
        #expect(asyncAgain == Fixtures.messages(3))
        #expect(syncReads == 0)
        #expect(asyncReads == 0)
    }

    @Test func withNoMemoryEveryLoadReads() async throws {
        // Given a cache whose memory tier keeps nothing
        let cache = try cache(memoryLimit: 0)
        try cache.messages.saveNow(Fixtures.messages(3))
        _ = try cache.messages.loadNow(in: url)

        // When the channel is loaded again
        let (again, count) = try await reads { try await cache.messages.load(in: url) }

        // Then it was read from its file
        #expect(again == Fixtures.messages(3))
        #expect(count > 0)
    }

    @Test(.timeLimit(.minutes(1)))
    func aWriteByAnotherProcessIsNoticed() async throws {
        // Given cache A holding the channel "shared" in memory
        let cache = try cache()
        try cache.messages.saveNow([ChatMessage(messageID: 1, channelURL: "shared", createdAt: 1, text: "from A")])
        #expect(try await cache.messages.load(in: "shared").count == 1)

        // When another process adds 3 messages to it
        let process = Process()
        process.executableURL = ProcessTests.helper
        process.arguments = ["upsert", folder.url.path, "1", "3"]
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)

        // Then A's next loads return them, synchronous and asynchronous
        let expected: [Int64] = [1, 100_001, 100_002, 100_003]
        #expect(try await cache.messages.load(in: "shared").map(\.messageID) == expected)
        #expect(try cache.messages.loadNow(in: "shared").map(\.messageID) == expected)
    }

    @Test func aWriteByAnotherInstanceIsNoticed() async throws {
        // Given instance A holding a channel in memory, and instance B on the same folder
        let a = try cache()
        let b = try cache()
        try a.messages.saveNow(Fixtures.messages(2))
        #expect(try await a.messages.load(in: url) == Fixtures.messages(2))

        // When B appends a message (synchronously)
        try b.messages.saveNow([Fixtures.message(3, at: 3_000)])

        // Then A's next load returns it
        #expect(try await a.messages.load(in: url) == Fixtures.messages(3))

        // And when B edits one in place (a rewrite) through write-behind, once flushed
        var edited = Fixtures.message(1, at: 1_000, text: "edited")
        edited.updatedAt = 5_000
        try await b.messages.save([edited])
        try await b.flush()

        // Then A sees the edit too
        #expect(try a.messages.loadNow(in: url).first?.text == "edited")
    }

    @Test func theLeastRecentlyUsedChannelLeavesFirst() async throws {
        // Given 20 channels of 5 messages on disk, and a cache whose memory
        // tier holds only a few of them (each costs over 1 KB by its estimate)
        let writer = try cache()
        let urls = (0..<20).map { "channel-\($0)" }
        for channelURL in urls { try writer.messages.saveNow(Fixtures.messages(5, in: channelURL)) }
        let cache = try cache(memoryLimit: 6_000)

        // When every channel is loaded, one after another
        for channelURL in urls { #expect(try await cache.messages.load(in: channelURL).count == 5) }

        // Then the last one loaded is still in memory: reloading it reads nothing
        let (newest, newestReads) = try await reads { try await cache.messages.load(in: urls[urls.count - 1]) }
        #expect(newest == Fixtures.messages(5, in: urls[urls.count - 1]))
        #expect(newestReads == 0)
        // and the first one loaded was evicted: reloading it reads its file
        let (oldest, oldestReads) = try await reads { try await cache.messages.load(in: urls[0]) }
        #expect(oldest == Fixtures.messages(5, in: urls[0]))
        #expect(oldestReads > 0)
    }

    @Test func aChannelUsedAgainStaysWhileOthersLeave() async throws {
        // Given 20 channels on disk and a small memory tier
        let writer = try cache()
        let urls = (0..<20).map { "channel-\($0)" }
        for channelURL in urls { try writer.messages.saveNow(Fixtures.messages(5, in: channelURL)) }
        let cache = try cache(memoryLimit: 6_000)

        // When the first channel is loaded again between every other load
        for channelURL in urls.dropFirst() {
            _ = try await cache.messages.load(in: urls[0])
            _ = try await cache.messages.load(in: channelURL)
        }

        // Then it was never the least recently used: it is still in memory
        let (first, firstReads) = try await reads { try await cache.messages.load(in: urls[0]) }
        #expect(first.count == 5)
        #expect(firstReads == 0)
        // while one loaded once, early, is gone
        let (early, earlyReads) = try await reads { try await cache.messages.load(in: urls[1]) }
        #expect(early.count == 5)
        #expect(earlyReads > 0)
    }

    @Test func aNewMessageForAChannelMemoryLetGoReadsNoFile() async throws {
        // Given 20 channels loaded through a memory tier too small for their
        // records: the early ones are evicted, their summaries kept
        // (records of 2 KB, so that 16 summaries of 5 ids fit in the quarter of the budget they may take)
        let writer = try cache()
        let urls = (0..<20).map { "summary-\($0)" }
        let text = String(repeating: "long ", count: 400)
        func messages(in channelURL: String) -> [ChatMessage] {
            (1...5).map { Fixtures.message(Int64($0), at: Int64($0) * 1_000, in: channelURL, text: text) }
        }
        for channelURL in urls { try writer.messages.saveNow(messages(in: channelURL)) }
        let cache = try cache(memoryLimit: 40_000)
        for channelURL in urls { _ = try await cache.messages.load(in: channelURL) }

        // When a newer message arrives for an evicted channel and is flushed
        let newer = Fixtures.message(6, at: 6_000, in: urls[1])
        let (_, appendReads) = try await reads {
            try await cache.messages.save([newer])
            return try await cache.flush()
        }

        // Then the write appended it without reading the file
        #expect(appendReads == 0)
        let fresh = try self.cache()
        #expect(try fresh.messages.loadNow(in: urls[1]) == messages(in: urls[1]) + [newer])
        // and one that is not newer than every cached message reads no file either: it is appended as a `*`
        // line (format 2), the file's limit leaving room for it whatever the file holds
        let older = Fixtures.message(7, at: 500, in: urls[2])
        let (_, insertReads) = try await reads {
            try await cache.messages.save([older])
            return try await cache.flush()
        }
        #expect(insertReads == 0)
        #expect(try fresh.messages.loadNow(in: urls[2]) == [older] + messages(in: urls[2]))
    }
}
