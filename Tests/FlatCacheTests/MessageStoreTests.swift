import FlatCache
import Foundation
import Testing

@Suite struct MessageStoreTests {
    let folder: TemporaryFolder
    let cache: ChatCache<ChatMessage, ChatChannel, ChatUser>
    let url = Fixtures.channelURL

    init() throws {
        folder = try TemporaryFolder()
        cache = try ChatCache(directory: folder.url, configuration: Configuration(maxMessagesPerChannel: 5))
    }

    // MARK: - save

    @Test func savedMessagesLoadBackOldestFirst() throws {
        let messages = Fixtures.messages(3)
        let result = try cache.messages.blocking.save(messages.reversed())
        #expect(result == SaveResult(filesWritten: 1))
        #expect(try cache.messages.blocking.load(in: url) == messages)
    }

    @Test func saveUpsertsByMessageID() throws {
        // Given two cached messages
        try cache.messages.blocking.save(Fixtures.messages(2))

        // When one is edited and a new one arrives
        var edited = Fixtures.message(2, at: 2_000, text: "edited")
        edited.updatedAt = 9_000
        try cache.messages.blocking.save([edited, Fixtures.message(3, at: 3_000)])

        // Then the edit replaced the old version and the new one was added
        #expect(try cache.messages.blocking.load(in: url) == [Fixtures.message(1, at: 1_000), edited, Fixtures.message(3, at: 3_000)])
    }

    @Test func theLastOfSeveralVersionsInOneSaveWins() throws {
        try cache.messages.blocking.save([Fixtures.message(1, at: 1_000, text: "a"), Fixtures.message(1, at: 1_000, text: "b")])
        #expect(try cache.messages.blocking.load(in: url).map(\.text) == ["b"])
    }

    @Test func messagesWithTheSameTimeAreOrderedByID() throws {
        try cache.messages.blocking.save([Fixtures.message(9, at: 1_000), Fixtures.message(4, at: 1_000)])
        #expect(try cache.messages.blocking.load(in: url).map(\.messageID) == [4, 9])
    }

    @Test func keepsOnlyTheMostRecentMessagesOfEachChannel() throws {
        let result = try cache.messages.blocking.save(Fixtures.messages(8))
        #expect(result.recordsDropped == 3)
        #expect(try cache.messages.blocking.load(in: url).map(\.messageID) == [4, 5, 6, 7, 8])

        // An old message arriving later does not push out newer ones
        try cache.messages.blocking.save([Fixtures.message(100, at: 1)])
        #expect(try cache.messages.blocking.load(in: url).map(\.messageID) == [4, 5, 6, 7, 8])
    }

    @Test func neverCachesAnUnsentMessage() throws {
        let result = try cache.messages.blocking.save([Fixtures.message(0, at: 5_000), Fixtures.message(1, at: 1_000)])
        #expect(result.recordsLeftOut == 1)
        #expect(try cache.messages.blocking.load(in: url).map(\.messageID) == [1])
    }

    @Test func neverCachesAMessageOfAnOpenChannel() throws {
        var open = Fixtures.message(7, at: 1_000, in: "open_lobby")
        open.channelKind = .open
        let result = try cache.messages.blocking.save([open])
        #expect(result == SaveResult(recordsLeftOut: 1))
        #expect(try cache.messages.blocking.load(in: "open_lobby") == [])
        #expect(!FileManager.default.fileExists(atPath: folder.appending("messages").path))
    }

    @Test func groupsASaveByChannel() throws {
        let a = Fixtures.messages(2, in: "a")
        let b = Fixtures.messages(3, in: "b")
        let result = try cache.messages.blocking.save(a + b)
        #expect(result.filesWritten == 2)
        #expect(try cache.messages.blocking.load(in: "a") == a)
        #expect(try cache.messages.blocking.load(in: "b") == b)
    }

    @Test func savingWhatIsCachedSkipsTheWrite() throws {
        try cache.messages.blocking.save(Fixtures.messages(3, in: "a") + Fixtures.messages(3, in: "b"))
        let again = try cache.messages.blocking.save(Fixtures.messages(3, in: "b") + Fixtures.messages(3, in: "a"))
        #expect(again == SaveResult(filesUnchanged: 2))
    }

    @Test func anEmptyChannelURLIsRejectedBeforeAnythingIsWritten() throws {
        #expect(throws: FlatCacheError.self) {
            try cache.messages.blocking.save([Fixtures.message(1, at: 1, in: "a"), Fixtures.message(2, at: 2, in: "")])
        }
        #expect(try cache.messages.blocking.load(in: "a") == [])
        #expect(throws: FlatCacheError.self) { try cache.messages.blocking.load(in: "") }
    }

    // MARK: - paging

    @Test func pagesBackFromATimestamp() throws {
        try cache.messages.blocking.save(Fixtures.messages(5))
        #expect(try cache.messages.blocking.load(in: url, before: 4_000, limit: 2).map(\.messageID) == [2, 3])
        #expect(try cache.messages.blocking.load(in: url, before: 4_000, limit: 2, inclusive: true).map(\.messageID) == [3, 4])
        #expect(try cache.messages.blocking.load(in: url, before: 1_000, limit: 10) == [])
        #expect(try cache.messages.blocking.load(in: url, before: 9_999, limit: 0) == [])
    }

    @Test func pagesForwardFromATimestamp() throws {
        try cache.messages.blocking.save(Fixtures.messages(5))
        #expect(try cache.messages.blocking.load(in: url, after: 2_000, limit: 2).map(\.messageID) == [3, 4])
        #expect(try cache.messages.blocking.load(in: url, after: 2_000, limit: 2, inclusive: true).map(\.messageID) == [2, 3])
        #expect(try cache.messages.blocking.load(in: url, after: 5_000, limit: 10) == [])
    }

    @Test func aNegativeLimitIsRejected() throws {
        #expect(throws: FlatCacheError.self) { try cache.messages.blocking.load(in: url, before: 0, limit: -1) }
        #expect(throws: FlatCacheError.self) { try cache.messages.blocking.load(in: url, after: 0, limit: -1) }
    }

    // MARK: - replace

    @Test func replaceMakesTheListTheWholeContent() throws {
        try cache.messages.blocking.save(Fixtures.messages(5))
        let fresh = [Fixtures.message(10, at: 10_000), Fixtures.message(0, at: 11_000)]
        let result = try cache.messages.blocking.replace(fresh, in: url)
        #expect(result == SaveResult(filesWritten: 1, recordsLeftOut: 1))
        #expect(try cache.messages.blocking.load(in: url).map(\.messageID) == [10])
    }

    @Test func replaceWithTheCachedListSkipsTheWrite() throws {
        try cache.messages.blocking.save(Fixtures.messages(4))
        #expect(try cache.messages.blocking.replace(Fixtures.messages(4).reversed(), in: url) == SaveResult(filesUnchanged: 1))
    }

    @Test func replaceKeepsTheMostRecent() throws {
        let result = try cache.messages.blocking.replace(Fixtures.messages(7), in: url)
        #expect(result.recordsDropped == 2)
        #expect(try cache.messages.blocking.load(in: url).map(\.messageID) == [3, 4, 5, 6, 7])
    }

    @Test func replaceWithNothingLeavesTheChannelEmpty() throws {
        try cache.messages.blocking.save(Fixtures.messages(2))
        try cache.messages.blocking.replace([], in: url)
        #expect(try cache.messages.blocking.load(in: url) == [])
    }

    @Test func replaceRejectsAMessageOfAnotherChannel() throws {
        try cache.messages.blocking.save(Fixtures.messages(2))
        #expect(throws: FlatCacheError.self) {
            try cache.messages.blocking.replace([Fixtures.message(1, at: 1, in: "elsewhere")], in: url)
        }
        #expect(try cache.messages.blocking.load(in: url) == Fixtures.messages(2))
    }

    // MARK: - change logs

    @Test func appliesUpdatesAndDeletions() throws {
        try cache.messages.blocking.save(Fixtures.messages(4))
        var edited = Fixtures.message(2, at: 2_000, text: "edited")
        edited.updatedAt = 5_000
        let result = try cache.messages.blocking.applyChangeLog(updated: [edited], deletedMessageIDs: [3, 99], in: url)
        #expect(result == SaveResult(filesWritten: 1))
        #expect(try cache.messages.blocking.load(in: url) == [Fixtures.message(1, at: 1_000), edited, Fixtures.message(4, at: 4_000)])
    }

    @Test func anEmptyChangeLogWritesNothing() throws {
        try cache.messages.blocking.save(Fixtures.messages(2))
        #expect(try cache.messages.blocking.applyChangeLog(updated: [], deletedMessageIDs: [], in: url) == SaveResult(filesUnchanged: 1))
    }

    @Test func aChangeLogRejectsAMessageOfAnotherChannel() throws {
        #expect(throws: FlatCacheError.self) {
            try cache.messages.blocking.applyChangeLog(
                updated: [Fixtures.message(1, at: 1, in: "elsewhere")], deletedMessageIDs: [], in: url)
        }
    }

    // MARK: - remove

    @Test func removeAllInAChannelLeavesOthers() throws {
        try cache.messages.blocking.save(Fixtures.messages(2, in: "a") + Fixtures.messages(2, in: "b"))
        try cache.messages.blocking.removeAll(in: "a")
        try cache.messages.blocking.removeAll(in: "never-cached")
        #expect(try cache.messages.blocking.load(in: "a") == [])
        #expect(try cache.messages.blocking.load(in: "b") == Fixtures.messages(2, in: "b"))
    }
}

/// The first screen of a chat view, "never cached" told from "cached as empty",
/// and paging by message.
@Suite struct MessageStorePagingTests {
    let folder: TemporaryFolder
    let cache: ChatCache<ChatMessage, ChatChannel, ChatUser>
    let url = Fixtures.channelURL

    init() throws {
        folder = try TemporaryFolder()
        cache = try ChatCache(directory: folder.url)
    }

    @Test func loadLatestGivesTheNewestMessagesOldestFirst() throws {
        try cache.messages.blocking.save(Fixtures.messages(50).shuffled())
        #expect(try cache.messages.blocking.loadLatest(in: url, limit: 3).map(\.messageID) == [48, 49, 50])
        #expect(try cache.messages.blocking.loadLatest(in: url, limit: 80).count == 50)
        #expect(try cache.messages.blocking.loadLatest(in: url, limit: 0).isEmpty)
        #expect(try cache.messages.blocking.loadLatest(in: "never cached", limit: 30).isEmpty)
        #expect { try cache.messages.blocking.loadLatest(in: url, limit: -1) } throws: { error in
            guard case FlatCacheError.invalidLimit(-1) = error else { return false }
            return true
        }
    }

    @Test func loadIfCachedTellsNeverCachedFromCachedAsEmpty() throws {
        #expect(try cache.messages.blocking.loadIfCached(in: url) == nil)

        try cache.messages.blocking.replace([], in: url)
        #expect(try cache.messages.blocking.loadIfCached(in: url) == [])

        try cache.messages.blocking.save(Fixtures.messages(2))
        #expect(try cache.messages.blocking.loadIfCached(in: url) == Fixtures.messages(2))

        try cache.messages.blocking.removeAll(in: url)
        #expect(try cache.messages.blocking.loadIfCached(in: url) == nil)
    }

    // MARK: - Paging by message, in file order (time, then id): nothing skipped, nothing twice

    @Test func pagingBackByMessageVisitsEveryMessageOnceEvenWithinOneMillisecond() throws {
        // Given 25 messages, many sharing a millisecond
        let messages = (1...25).map { Fixtures.message(Int64($0), at: Int64($0 / 4) * 1_000) }
        try cache.messages.blocking.save(messages.shuffled())

        // When the app pages back 3 at a time from the newest page
        var seen = try cache.messages.blocking.loadLatest(in: url, limit: 3)
        var pages = 1
        while let oldest = seen.first, pages < 20 {
            let older = try cache.messages.blocking.load(in: url, before: oldest, limit: 3)
            if older.isEmpty { break }
            seen = older + seen
            pages += 1
        }

        // Then it saw every message exactly once, in order; paging by timestamp would skip ties
        #expect(seen.map(\.messageID) == Array(1...25))
        #expect(pages == 9)
        let byTime = try cache.messages.blocking.load(in: url, before: messages[12].createdAt, limit: 3)
        #expect(byTime.last?.messageID == 11)  // 12 shares 3_000 ms with 13, 14 and 15: skipped by time
        #expect(try cache.messages.blocking.load(in: url, before: messages[12], limit: 3).map(\.messageID) == [10, 11, 12])
    }

    @Test func pagingForwardByMessage() throws {
        try cache.messages.blocking.save(Fixtures.messages(10))
        #expect(try cache.messages.blocking.load(in: url, after: Fixtures.message(4, at: 4_000), limit: 3).map(\.messageID) == [5, 6, 7])
        #expect(try cache.messages.blocking.load(in: url, after: Fixtures.message(9, at: 9_000), limit: 3).map(\.messageID) == [10])
        #expect { try cache.messages.blocking.load(in: url, after: Fixtures.message(1, at: 1), limit: -1) } throws: { error in
            guard case FlatCacheError.invalidLimit(-1) = error else { return false }
            return true
        }
    }
}
