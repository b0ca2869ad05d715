import Foundation
import Testing

@testable import FlatCache

/// The search index learns a write that only appended lines (a new message,
/// a change log) from the records those lines say, without reading the
/// channel again, and reads it whenever they may not say everything: a
/// write between them it was not told of, another process's, memory's
/// changes not written yet.
@Suite(.timeLimit(.minutes(1))) struct SearchAppendedWritesTests {
    typealias Cache = ChatCache<ChatMessage, ChatChannel, ChatUser>

    let folder = try! TemporaryFolder()

    static func message(_ id: Int64, in channel: String = "trip", _ text: String) -> ChatMessage {
        MessageSearchTests.message(id, in: channel, text)
    }

    /// A channel of 40 messages ("hello <id>") and another of 5 on disk, and a new instance whose index
    /// read both, neither kept in memory (no search showed a hit of theirs yet).
    func indexedCache() async throws -> Cache {
        let writer = try Cache(directory: folder.url)
        try await writer.messages.replace((1...40).map { Self.message($0, "hello \($0)") }, in: "trip")
        try await writer.messages.replace((101...105).map { Self.message($0, in: "work", "hello \($0)") }, in: "work")
        try await writer.flush()
        let cache = try Cache(directory: folder.url)
        #expect(try await cache.search.prepare().indexedMessages == 45)
        #expect(cache.search.service.filesReadSoFar == 2)
        #expect(try await cache.statistics().memoryBytes == 0)
        return cache
    }

    @Test func aNewMessageAndAChangeLogAreIndexedFromTheirLinesWithoutReadingTheChannel() async throws {
        let cache = try await indexedCache()

        // A new message into a channel not read since launch, then another into the same channel
        try await cache.messages.save([Self.message(41, "zephyr arrives")])
        try await cache.flush()
        let diskHits = try await cache.statistics().diskHits
        let first = try await cache.search.messages(matching: "zephyr", limit: 10).hits
        #expect(first.map(\.message) == [Self.message(41, "zephyr arrives")] && first.first?.channelURL == "trip")
        // Its hit is the message the lines said: the channel was not loaded for it
        #expect(try await cache.statistics().diskHits == diskHits)
        try await cache.messages.save([Self.message(42, "zephyr again")])
        try await cache.flush()
        #expect(Set(try await MessageSearchTests.ids(cache, "zephyr")) == [41, 42])

        // A change log: message 2 edited, message 3 and 41 deleted, 50 added
        try await cache.messages.applyChangeLog(
            updated: [Self.message(2, "amended words"), Self.message(50, "zephyr late")], deletedMessageIDs: [3, 41], in: "trip")
        try await cache.flush()
        #expect(try await MessageSearchTests.ids(cache, "amended") == [2])
        #expect(Set(try await MessageSearchTests.ids(cache, "zephyr")) == [42, 50])
        #expect(try await MessageSearchTests.ids(cache, "\"hello 2\"").isEmpty)
        #expect(try await MessageSearchTests.ids(cache, "\"hello 3\"").isEmpty)
        #expect(try await cache.search.progress().indexedMessages == 45 + 1)

        // Then no channel was read again, and a new instance's index, read from the files, agrees
        #expect(cache.search.service.filesReadSoFar == 2)
        try await cache.close()
        let fresh = try Cache(directory: folder.url)
        #expect(Set(try await MessageSearchTests.ids(fresh, "zephyr")) == [42, 50])
        #expect(try await MessageSearchTests.ids(fresh, "amended") == [2])
        #expect(try await fresh.search.progress().indexedMessages == 46)
    }

    @Test func aMessageNewerOnesPushedOutOfWhatALoadShowsIsNoHitThoughTheLinesSaidIt() async throws {
        // A channel kept at 2 messages, indexed
        let configuration = Configuration(maxMessagesPerChannel: 2)
        let cache = try Cache(directory: folder.url, configuration: configuration)
        try await cache.messages.replace([Self.message(1, "hello 1"), Self.message(2, "hello 2")], in: "trip")
        try await cache.flush()
        #expect(try await cache.search.prepare().indexedMessages == 2)

        // When three new messages come, one write each (appended: the file holds more than a load shows)
        for id in Int64(3)...5 {
            try await cache.messages.save([Self.message(id, "zephyr \(id)")])
            try await cache.flush()
        }

        // Then only those a load shows are hits
        #expect(try await cache.messages.load(in: "trip").map(\.messageID) == [4, 5])
        #expect(Set(try await MessageSearchTests.ids(cache, "zephyr")) == [4, 5])
    }

    @Test func aMessageWithoutTextAndTheSameMessageSavedAgainLeaveTheIndexRight() async throws {
        let cache = try await indexedCache()
        // Message 5 edited to no text: it leaves the index; message 6 saved as it is: nothing changes
        try await cache.messages.applyChangeLog(updated: [Self.message(5, "")], deletedMessageIDs: [], in: "trip")
        try await cache.flush()
        try await cache.messages.save([Self.message(6, "hello 6")])
        try await cache.flush()
        #expect(try await MessageSearchTests.ids(cache, "\"hello 5\"").isEmpty)
        #expect(try await MessageSearchTests.ids(cache, "\"hello 6\"") == [6])
        #expect(try await cache.search.progress().indexedMessages == 44)
    }

    @Test func aWriteTheIndexWasNotToldOfBetweenTwoAppendsMakesItReadTheChannel() async throws {
        let cache = try await indexedCache()
        // An append it is told of, then a rewrite (not an append), then another append
        try await cache.messages.save([Self.message(41, "zephyr one")])
        try await cache.flush()
        try await cache.messages.replace((1...3).map { Self.message($0, "hello \($0)") } + [Self.message(41, "zephyr one")], in: "trip")
        try await cache.flush()
        try await cache.messages.save([Self.message(42, "zephyr two")])
        try await cache.flush()
        #expect(Set(try await MessageSearchTests.ids(cache, "zephyr")) == [41, 42])
        #expect(try await MessageSearchTests.ids(cache, "hello").count == 3 + 5)
        #expect(cache.search.service.filesReadSoFar == 3)
    }

    @Test func anotherProcesssAppendBeforeOursMakesTheIndexReadTheChannelAtOnce() async throws {
        let cache = try await indexedCache()
        try await cache.messages.save([Self.message(41, "zephyr ours")])
        try await cache.flush()
        #expect(try await MessageSearchTests.ids(cache, "zephyr") == [41])
        // Another process appends, then this one: found at once, not only when the index next looks for other writers
        #expect(try Executables.runHelper(["save", folder.url.path, "trip", "77"]) == 0)
        try await cache.messages.save([Self.message(42, "zephyr ours again")])
        try await cache.flush()
        #expect(try await MessageSearchTests.ids(cache, "message") == [77])
        #expect(Set(try await MessageSearchTests.ids(cache, "zephyr")) == [41, 42])
    }

    @Test func aMessageAnotherProcessDeletedIsNoHitBeforeTheIndexLooksForOtherWriters() async throws {
        let cache = try await indexedCache()
        try await cache.messages.save([Self.message(41, "zephyr ours")])
        try await cache.flush()
        #expect(try await MessageSearchTests.ids(cache, "zephyr") == [41])
        // Deleted by another process: the index still holds it (it looks for other writers once a
        // second), but the hit is checked against the file as it is now
        #expect(try Executables.runHelper(["delete", folder.url.path, "trip", "41"]) == 0)
        #expect(try await MessageSearchTests.ids(cache, "zephyr").isEmpty)
    }

    @Test func changesWaitingInMemoryMakeTheIndexReadTheChannel() async throws {
        let cache = try await indexedCache()
        try await cache.messages.save([Self.message(41, "zephyr written")])
        try await cache.flush()
        // Saved to memory only after the write: the write's lines do not say it
        try await cache.messages.using(.memory).save([Self.message(43, "zephyr in memory")])
        #expect(Set(try await MessageSearchTests.ids(cache, "zephyr")) == [41, 43])
    }

    static func stamp(size: Int) -> FileStamp {
        FileStamp(device: 1, inode: 2, size: size, modified: .init(seconds: 4, nanoseconds: 5), changed: .init(seconds: 4, nanoseconds: 5))
    }

    @Test func aLedgerPastItsLimitKeepsThePathsButNoneOfTheAppendedWrites() {
        let ledger = ChangeLedger()
        let stamp = Self.stamp(size: 3)
        let small = AppendedWrite(before: Self.stamp(size: 1), after: Self.stamp(size: 2), changes: [], size: 10)
        ledger.record("a", appended: small)
        ledger.record("a", appended: small)
        ledger.record("b")
        var taken = ledger.take()
        #expect(taken.paths == ["a", "b"] && taken.appended["a"]?.count == 2 && taken.appended["b"] == nil)
        // Past the limit: every appended write goes, until the next take
        ledger.record("a", appended: small)
        ledger.record("c", appended: AppendedWrite(before: stamp, after: stamp, changes: [], size: ChangeLedger.appendedLimit))
        ledger.record("d", appended: small)
        taken = ledger.take()
        #expect(taken.paths == ["a", "c", "d"] && taken.appended.isEmpty)
        ledger.record("e", appended: small)
        #expect(ledger.take().appended["e"]?.count == 1)
    }

    @Test func writesThatChangedNothingAreKeptOnceAndCountTowardTheLimit() {
        let ledger = ChangeLedger()
        let stamp = Self.stamp(size: 3)
        let unchanged = AppendedWrite(before: stamp, after: stamp, changes: [], size: 0)
        // The same unchanged file written again and again is one entry
        for _ in 0..<10 { ledger.record("a", appended: unchanged) }
        #expect(ledger.take().appended["a"]?.count == 1)
        // Over many files, they count toward the limit like any write
        for file in 0...ChangeLedger.appendedLimit { ledger.record("f\(file)", appended: unchanged) }
        let taken = ledger.take()
        #expect(taken.paths.count == ChangeLedger.appendedLimit + 1 && taken.appended.isEmpty)
    }
}
