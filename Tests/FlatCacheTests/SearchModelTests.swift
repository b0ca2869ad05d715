import Foundation
import Observation
import Testing

@testable import FlatCache

/// `SearchModel`: each letter typed starts a new search and the hits are
/// always the last text's; pages add up; an answer given while the index
/// was being built is replaced by the complete one.
@MainActor @Suite(.timeLimit(.minutes(1))) struct SearchModelTests {
    let folder = try! TemporaryFolder()

    func cache(with messages: [ChatMessage]) async throws -> ChatCache<ChatMessage, ChatChannel, ChatUser> {
        let cache = try ChatCache(directory: folder.url)
        try await cache.messages.save(messages)
        return cache
    }

    @Test func theHitsAreAlwaysTheLastTextsWhateverTheOrderAnswersCameIn() async throws {
        let cache = try await cache(with: [
            MessageSearchTests.message(1, "train at nine"), MessageSearchTests.message(2, "trail run"),
            MessageSearchTests.message(3, "tea time"),
        ])
        let model = SearchModel(cache.search)
        for text in ["t", "tr", "tra", "trai", "trail"] { model.text = text }
        await model.settle()
        #expect(model.hits.map(\.message.messageID) == [2])
        #expect(!model.isSearching && model.error == nil && !model.hasMore)
        #expect(model.progress?.isComplete == true)

        model.text = "t"
        await model.settle()
        #expect(Set(model.hits.map(\.message.messageID)) == [1, 2, 3])
        model.text = " "
        #expect(model.hits.isEmpty && !model.isSearching)
        model.text = "tea"
        model.filter = SearchFilter(channelURLs: ["elsewhere"])
        await model.settle()
        #expect(model.hits.isEmpty)
        model.filter = SearchFilter()
        await model.settle()
        #expect(model.hits.map(\.message.messageID) == [3])
    }

    @Test func loadMoreAddsTheNextPage() async throws {
        let cache = try await cache(with: (1...12).map { MessageSearchTests.message($0, "page \($0)") })
        let model = SearchModel(cache.search, pageSize: 5)
        model.order = .newestFirst
        model.text = "page"
        await model.settle()
        #expect(model.hits.map(\.message.messageID) == [12, 11, 10, 9, 8] && model.hasMore)
        await model.loadMore()
        await model.loadMore()
        #expect(model.hits.map(\.message.messageID) == Array((1...12).reversed()) && !model.hasMore)
        await model.loadMore()
        #expect(model.hits.count == 12)
    }

    @Test func anAnswerFromAnIndexStillBeingBuiltIsReplacedByTheWholeOne() async throws {
        // Enough channels that the first search answers while the build goes on in the background
        let writer = try ChatCache(directory: folder.url)
        try writer.messages.blocking.save((1...300).map { MessageSearchTests.message($0, in: "c\($0)", "hello \($0)") })
        let cache = try ChatCache(directory: folder.url)
        let model = SearchModel(cache.search, pageSize: 500)
        model.text = "hello"
        await model.settle()
        #expect(model.hits.count == 300)
        #expect(model.progress?.isComplete == true)
    }
}
