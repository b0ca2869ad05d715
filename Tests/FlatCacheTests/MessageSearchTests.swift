import Foundation
import Testing

@testable import FlatCache

/// `cache.search` through the public API: every store operation shows in
/// the next search (saves, edits, deletions, replaces, removals, retention,
/// expiry, eviction, another process's writes), hits carry their message
/// and highlights, pages go on where they ended.
@Suite(.timeLimit(.minutes(1))) struct MessageSearchTests {
    typealias Cache = ChatCache<ChatMessage, ChatChannel, ChatUser>

    let folder = try! TemporaryFolder()

    static func message(_ id: Int64, in channel: String = "trip", _ text: String, from sender: String = "mina") -> ChatMessage {
        ChatMessage(
            messageID: id, channelURL: channel, createdAt: 1_700_000_000_000 + id * 1_000,
            sender: ChatUser(userID: sender, nickname: sender), text: text)
    }

    /// The ids the search finds for `text`, in its order.
    static func ids(_ cache: Cache, _ text: String, filter: SearchFilter = SearchFilter(), order: SearchOrder = .relevance) async throws
        -> [Int64]
    {
        try await cache.search.messages(matching: text, filter: filter, order: order, limit: 100).hits.map(\.message.messageID)
    }

    @Test func aSearchLeavesWhatWasSavedToDiskOnlyOutOfMemory() async throws {
        let cache = try Cache(directory: folder.url)
        try await cache.messages.save([Self.message(1, in: "hot", "hello hot")])
        #expect(try await Self.ids(cache, "hello") == [1])
        let disk = cache.messages.using(.disk)
        for channel in 0..<20 {
            try await disk.save([Self.message(Int64(100 + channel), in: "bg\(channel)", "hello background")])
        }
        // Indexed by this search, and still not in memory: a `.disk` save promises that
        #expect(try await Self.ids(cache, "hot") == [1])
        #expect(try await cache.search.progress().indexedMessages == 21)
        for channel in [0, 3, 19] { #expect(!cache.engine.holds(try cache.layout.messagesFile(forChannel: "bg\(channel)"))) }
    }

    @Test func aSavedMessageIsFoundByItsWordsAndTheirBeginnings() async throws {
        let cache = try Cache(directory: folder.url)
        try await cache.messages.save([
            Self.message(1, "Meet at the trail head"), Self.message(2, "José brings the tent"),
            Self.message(3, in: "work", "Trafalgar Square at noon"),
        ])
        #expect(try await Self.ids(cache, "trail") == [1])
        #expect(Set(try await Self.ids(cache, "tra")) == [1, 3])
        #expect(try await Self.ids(cache, "jose") == [2])
        #expect(try await Self.ids(cache, "\"trail head\"") == [1])
        #expect(try await Self.ids(cache, "\"head trail\"").isEmpty)
        #expect(try await Self.ids(cache, "").isEmpty)
        #expect(try await Self.ids(cache, "  ,.!  ").isEmpty)
    }

    @Test func aHitCarriesItsMessageChannelAndHighlights() async throws {
        let cache = try Cache(directory: folder.url)
        let saved = Self.message(1, "See you at the Trail head, José!")
        try await cache.messages.save([saved])
        let hit = try #require(try await cache.search.messages(matching: "trail jose").hits.first)
        #expect(hit.message == saved)
        #expect(hit.channelURL == "trip")
        #expect(hit.text == saved.text)
        #expect(hit.highlights.map { String(hit.text[$0]) } == ["Trail", "José"])
        #expect(hit.markedText(open: "[", close: "]") == "See you at the [Trail] head, [José]!")
        #expect(hit.score > 0)
        let phrase = try #require(try await cache.search.messages(matching: "\"trail head\"").hits.first)
        #expect(phrase.highlights.map { String(phrase.text[$0]) } == ["Trail head"])
    }

    @Test func anEditedMessageIsFoundByItsNewWordsOnlyAndADeletedOneNever() async throws {
        let cache = try Cache(directory: folder.url)
        try await cache.messages.save([Self.message(1, "lunch at noon"), Self.message(2, "dinner at eight")])
        #expect(try await Self.ids(cache, "lunch") == [1])

        // An upsert with new text
        try await cache.messages.save([Self.message(1, "brunch at eleven")])
        #expect(try await Self.ids(cache, "lunch").isEmpty)
        #expect(try await Self.ids(cache, "brunch") == [1])

        // A change log: an edit and a deletion
        try await cache.messages.applyChangeLog(
            updated: [Self.message(1, "picnic by the river")], deletedMessageIDs: [2], in: "trip")
        #expect(try await Self.ids(cache, "brunch").isEmpty)
        #expect(try await Self.ids(cache, "picnic") == [1])
        #expect(try await Self.ids(cache, "dinner").isEmpty)
        #expect(try await Self.ids(cache, "at").isEmpty)

        // And the same after write-behind wrote it all, read again by a new instance
        try await cache.flush()
        let reopened = try Cache(directory: folder.url)
        #expect(try await Self.ids(reopened, "picnic") == [1])
        #expect(try await Self.ids(reopened, "dinner").isEmpty)
    }

    @Test func replacesAndRemovalsLeaveNothingBehind() async throws {
        let cache = try Cache(directory: folder.url)
        try await cache.messages.save([Self.message(1, "old plan"), Self.message(2, in: "work", "old budget")])
        #expect(Set(try await Self.ids(cache, "old")) == [1, 2])

        try await cache.messages.replace([Self.message(3, "new plan")], in: "trip")
        #expect(try await Self.ids(cache, "old") == [2])
        #expect(try await Self.ids(cache, "plan") == [3])

        try await cache.messages.removeAll(in: "work")
        #expect(try await Self.ids(cache, "old").isEmpty)

        try await cache.removeAll()
        #expect(try await Self.ids(cache, "plan").isEmpty)
        try await cache.messages.save([Self.message(4, "a plan after logging out")])
        #expect(try await Self.ids(cache, "plan") == [4])
    }

    @Test func retentionDropsTheOldestFromSearchToo() async throws {
        let cache = try Cache(directory: folder.url, configuration: Configuration(maxMessagesPerChannel: 3))
        try await cache.messages.save((1...5).map { Self.message($0, "note \($0)") })
        #expect(Set(try await Self.ids(cache, "note")) == [3, 4, 5])
    }

    @Test func anExpiredChannelIsNotFoundAndAnEvictedOneIsGone() async throws {
        let clock = TestClock()
        let configuration = Configuration(writeDelay: .zero, maxAge: .seconds(86_400), clock: clock.cacheClock)
        let cache = try Cache(directory: folder.url, configuration: configuration)
        try await cache.messages.save([Self.message(1, "stale news")])
        try await cache.messages.save([Self.message(2, in: "fresh", "fresh news")])
        #expect(Set(try await Self.ids(cache, "news")) == [1, 2])

        // A day and a bit later only the channel saved since counts
        clock.advance(seconds: 80_000)
        try await cache.messages.save([Self.message(3, in: "fresh", "more news")])
        clock.advance(seconds: 10_000)
        #expect(Set(try await Self.ids(cache, "news")) == [2, 3])
        _ = try await cache.sweep()
        #expect(Set(try await Self.ids(cache, "news")) == [2, 3])
    }

    @Test func anotherProcesssWritesAreFoundBySearchesASecondLater() async throws {
        let cache = try Cache(directory: folder.url)
        try await cache.messages.save([Self.message(1, in: "shared", "ours")])
        #expect(try await Self.ids(cache, "message").isEmpty)
        try await cache.flush()

        try otherProcess("save", channel: "shared", id: 7)
        try await Task.sleep(for: .seconds(1.1))
        #expect(try await Self.ids(cache, "message") == [7])
        try otherProcess("save", channel: "elsewhere", id: 8)
        try await Task.sleep(for: .seconds(1.1))
        #expect(Set(try await Self.ids(cache, "message")) == [7, 8])
        try otherProcess("delete", channel: "shared", id: 7)
        try await Task.sleep(for: .seconds(1.1))
        #expect(try await Self.ids(cache, "message") == [8])
        try otherProcess("remove-all-then-save", channel: "third", id: 9)
        try await Task.sleep(for: .seconds(1.1))
        #expect(try await Self.ids(cache, "message") == [9])
        #expect(try await Self.ids(cache, "ours").isEmpty)
        // A new instance looks at once
        try otherProcess("save", channel: "third", id: 10)
        #expect(Set(try await Self.ids(try Cache(directory: folder.url), "message")) == [9, 10])
    }

    @Test func anInstanceWhoseFolderGotANewKeyReadsNothingAndMovesNothingAside() async throws {
        let old = try Cache(directory: folder.url, configuration: Configuration(encryption: .aes256gcm(key: Data(repeating: 1, count: 32))))
        try await old.messages.save([Self.message(1, "before the new key")])
        #expect(try await Self.ids(old, "key") == [1])
        let rotated = try await old.rotateKey(to: Data(repeating: 2, count: 32))
        // The old instance, still held (a view's model), searches again
        #expect(try await Self.ids(old, "key").isEmpty)
        let quarantine = folder.url.appendingPathComponent("quarantine")
        #expect((try? FileManager.default.contentsOfDirectory(atPath: quarantine.path))?.isEmpty ?? true)
        #expect(try await rotated.messages.load(in: "trip").map(\.messageID) == [1])
        #expect(try await Self.ids(rotated, "key") == [1])
    }

    @Test func whileAnotherInstanceChangesTheKeyASearchReadsNothingThenStartsAgain() async throws {
        let cache = try Cache(directory: folder.url)
        try await cache.messages.save([Self.message(1, "during the change")])
        #expect(try await Self.ids(cache, "change") == [1])
        // Another instance's key change under way: its `rekey` file is there, `records` not yet rewritten
        let rekey = folder.url.appendingPathComponent("rekey")
        _ = FileManager.default.createFile(atPath: rekey.path, contents: Data("from plain\nto plain\n".utf8))
        try await cache.messages.save([Self.message(2, "a change meanwhile")])
        #expect(try await Self.ids(cache, "change").isEmpty)
        try FileManager.default.removeItem(at: rekey)
        #expect(Set(try await Self.ids(cache, "change")) == [1, 2])
    }

    @Test func aSaveMadeBeforeTheFirstSearchIsFoundWhenASavedIndexIsRead() async throws {
        try Cache(directory: folder.url).messages.blocking.save([Self.message(1, "old news")])
        let first = try Cache(directory: folder.url)
        try await first.search.prepare()
        try await waitUntil("the snapshot is written") {
            FileManager.default.fileExists(atPath: folder.url.appendingPathComponent("search.lines").path)
        }
        // A new launch saves (written behind) before its first search
        let cache = try Cache(directory: folder.url, configuration: Configuration(writeDelay: .seconds(30)))
        try await cache.messages.save([Self.message(2, "zebra crossing")])
        #expect(try await Self.ids(cache, "zebra") == [2])
        try await cache.messages.using(.memory).save([Self.message(3, "zebra in memory")])
        #expect(Set(try await Self.ids(cache, "zebra")) == [2, 3])
    }

    @Test func whatALoadReturnsIsFoundWhateverLimitOrAgeTheIndexWasBuiltWith() async throws {
        try Cache(directory: folder.url, configuration: Configuration(maxMessagesPerChannel: 10))
            .messages.blocking.save((1...5).map { Self.message($0, "limit \($0)") })
        let narrow = try Cache(directory: folder.url, configuration: Configuration(maxMessagesPerChannel: 2))
        #expect(Set(try await Self.ids(narrow, "limit")) == [4, 5])
        try await narrow.search.prepare()
        try await waitUntil("the snapshot is written") {
            FileManager.default.fileExists(atPath: folder.url.appendingPathComponent("search.lines").path)
        }
        let wide = try Cache(directory: folder.url, configuration: Configuration(maxMessagesPerChannel: 10))
        #expect(Set(try await Self.ids(wide, "limit")) == [1, 2, 3, 4, 5])
    }

    @Test func theLargestLimitIsAnsweredNotTrapped() async throws {
        let cache = try Cache(directory: folder.url)
        try await cache.messages.save([Self.message(1, "everything")])
        #expect(try await cache.search.messages(matching: "everything", limit: .max).hits.count == 1)
    }

    /// Runs the test helper as another process: `save`, `delete` or
    /// `remove-all-then-save` of one message whose text is "message <id>".
    func otherProcess(_ command: String, channel: String, id: Int64) throws {
        #expect(try Executables.runHelper([command, folder.url.path, channel, "\(id)"]) == 0)
    }

    @Test func filtersNarrowByChannelSenderAndTime() async throws {
        let cache = try Cache(directory: folder.url)
        try await cache.messages.save([
            Self.message(1, in: "a", "coffee", from: "mina"), Self.message(2, in: "b", "coffee", from: "ode"),
            Self.message(3, in: "a", "coffee", from: "ode"), Self.message(4, in: "c", "coffee", from: "mina"),
        ])
        #expect(Set(try await Self.ids(cache, "coffee", filter: SearchFilter(channelURLs: ["a", "c"]))) == [1, 3, 4])
        #expect(Set(try await Self.ids(cache, "coffee", filter: SearchFilter(senderIDs: ["ode"]))) == [2, 3])
        let second = Self.message(2, "").createdAt
        #expect(
            Set(try await Self.ids(cache, "coffee", filter: SearchFilter(createdSince: second, createdBefore: second + 2_000)))
                == [2, 3])
        #expect(try await Self.ids(cache, "coffee", filter: SearchFilter(channelURLs: ["nowhere"])).isEmpty)
        #expect(try await Self.ids(cache, "coffee", order: .newestFirst) == [4, 3, 2, 1])
    }

    @Test func pagesGoOnWhereTheLastEndedAndTheLastSaysSo() async throws {
        let cache = try Cache(directory: folder.url)
        try await cache.messages.save((1...25).map { Self.message($0, in: "c\($0 % 3)", "round \($0)") })
        var seen = [Int64]()
        var page = try await cache.search.messages(matching: "round", order: .newestFirst, limit: 10)
        seen += page.hits.map(\.message.messageID)
        while let next = page.next {
            page = try await cache.search.messages(after: next)
            seen += page.hits.map(\.message.messageID)
        }
        #expect(seen == Array((1...25).reversed()))

        // Exactly one page's worth: no empty page after it
        let exact = try await cache.search.messages(matching: "round", limit: 25)
        #expect(exact.hits.count == 25 && exact.next == nil)
    }

    @Test func aLimitBelowOneIsRefused() async throws {
        let cache = try Cache(directory: folder.url)
        await #expect(throws: FlatCacheError.self) { try await cache.search.messages(matching: "x", limit: 0) }
        #expect(throws: FlatCacheError.self) { try cache.search.blocking.messages(matching: "x", limit: -1) }
    }

    @Test func theBuildIndexesWhatWasCachedBeforeAndReportsProgress() async throws {
        let writer = try Cache(directory: folder.url)
        for channel in 0..<40 {
            try writer.messages.blocking.save((1...5).map { Self.message(Int64(channel * 10 + $0), in: "c\(channel)", "word\($0) common") })
        }
        let cache = try Cache(directory: folder.url)
        let done = try await cache.search.prepare()
        #expect(done.isComplete && done.indexedChannels == 40 && done.channelCount == 40 && done.indexedMessages == 200)
        #expect(done.fractionCompleted == 1)
        #expect(try await Self.ids(cache, "common").count == 100)
        #expect(try await cache.search.messages(matching: "word3").hits.count == 20)
        #expect(try await cache.search.progress() == done)
        // The blocking twins answer the same
        #expect(try cache.search.blocking.messages(matching: "word3").hits.map(\.message) == (try await cache.search.messages(matching: "word3").hits.map(\.message)))
        #expect(try cache.search.blocking.prepare() == done)
    }

    @Test func anEncryptedCacheIsSearchedAndNoFileHoldsItsWords() async throws {
        let key = Data((0..<32).map { UInt8($0) })
        let configuration = Configuration(encryption: .aes256gcm(key: key))
        let cache = try Cache(directory: folder.url, configuration: configuration)
        try await cache.messages.save([Self.message(1, "secret rendezvous")])
        #expect(try await Self.ids(cache, "rendezvous") == [1])
        try await cache.close()
        for file in try FileManager.default.subpathsOfDirectory(atPath: folder.url.path) {
            guard let bytes = FileManager.default.contents(atPath: folder.url.appendingPathComponent(file).path) else { continue }
            #expect(bytes.range(of: Data("rendezvous".utf8)) == nil, "\(file)")
        }
        let rotated = try await cache.rotateKey(to: Data((0..<32).map { UInt8(100 + $0) }))
        #expect(try await Self.ids(rotated, "rendezvous") == [1])
    }
}

/// Cancelling a search's task ends it with `CancellationError`, and leaves the index answering.
@Suite(.timeLimit(.minutes(1))) struct MessageSearchCancellationTests {
    let folder = try! TemporaryFolder()

    @Test func aSearchWhoseTaskIsCancelledThrowsCancellationErrorAndTheNextAnswers() async throws {
        let cache = try ChatCache(directory: folder.url)
        try await cache.messages.save((1...200).map { MessageSearchTests.message($0, in: "c\($0 % 7)", "word \($0)") })
        let search = cache.search
        let task = Task {
            while !Task.isCancelled { await Task.yield() }
            return try await search.messages(matching: "word")
        }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        let prepare = Task {
            while !Task.isCancelled { await Task.yield() }
            return try await search.prepare()
        }
        prepare.cancel()
        await #expect(throws: CancellationError.self) { try await prepare.value }
        #expect(try await search.messages(matching: "word", limit: 500).hits.count == 200)
    }
}
