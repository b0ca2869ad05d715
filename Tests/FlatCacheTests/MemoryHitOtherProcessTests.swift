import FlatCache
import Foundation
import Testing

/// A channel held in memory is paged from memory after a `stat` shows its
/// data file unchanged; every write by another process changes that file
/// (an append its size, a rewrite its inode), so the next page shows it.
@Suite(.timeLimit(.minutes(1))) struct MemoryHitOtherProcessTests {
    let folder = try! TemporaryFolder()
    let url = "in-memory-\(UUID())"

    static func message(_ id: Int64, in url: String) -> ChatMessage {
        ChatMessage(messageID: id, channelURL: url, createdAt: id * 1_000, text: "message \(id)")
    }

    /// Runs the test helper as another process: `save` or `delete` of one message.
    func otherProcess(_ command: String, id: Int64) throws {
        #expect(try Executables.runHelper([command, folder.url.path, url, "\(id)"]) == 0)
    }

    @Test func theNextPageFromMemoryShowsAnotherProcessWrites() async throws {
        // Given a channel this cache holds in memory, paged from memory
        let cache = try ChatCache(directory: folder.url)
        try cache.messages.saveNow((1...40).map { Self.message($0, in: url) })
        _ = try cache.messages.loadNow(in: url)
        #expect(try await cache.messages.loadLatest(in: url, limit: 30).last == Self.message(40, in: url))
        let hitsBefore = try await cache.statistics().memoryHits

        // When another process appends a message, the next page shows it
        try otherProcess("save", id: 41)
        #expect(try await cache.messages.loadLatest(in: url, limit: 30).last == Self.message(41, in: url))
        #expect(try await cache.messages.loadLatest(in: url, limit: 30).last == Self.message(41, in: url))
        // (the page after that came from memory again)
        #expect(try await cache.statistics().memoryHits > hitsBefore)

        // When another process deletes one (its file rewritten), the next page no longer has it
        try otherProcess("delete", id: 41)
        #expect(try await cache.messages.loadLatest(in: url, limit: 30).last == Self.message(40, in: url))

        // When another process appends twice in a row (its sidecar rewritten in place at the same
        // size, possibly within one tick of the clock), the next page shows both
        try otherProcess("save", id: 42)
        #expect(try await cache.messages.loadLatest(in: url, limit: 30).last == Self.message(42, in: url))
        try otherProcess("save", id: 43)
        try otherProcess("save", id: 44)
        let page = try await cache.messages.loadLatest(in: url, limit: 30)
        #expect(page.suffix(3) == [42, 43, 44].map { Self.message($0, in: url) })
    }

    @Test func aPageFromMemoryShowsTheCacheAnotherProcessEmptiedAndFilledAgain() async throws {
        // Given a channel this cache holds in memory, its file `stat`ed through the messages folder it opened
        let cache = try ChatCache(directory: folder.url)
        try cache.messages.saveNow((1...40).map { Self.message($0, in: url) })
        _ = try cache.messages.loadNow(in: url)
        #expect(try await cache.messages.loadLatest(in: url, limit: 30).count == 30)

        // When another process empties the cache (deleting that folder) and saves one message in a new one
        try otherProcess("remove-all-then-save", id: 99)

        // Then the next page is that one message, and the page after it comes from memory again
        #expect(try await cache.messages.loadLatest(in: url, limit: 30) == [Self.message(99, in: url)])
        let hitsBefore = try await cache.statistics().memoryHits
        #expect(try await cache.messages.loadLatest(in: url, limit: 30) == [Self.message(99, in: url)])
        #expect(try await cache.statistics().memoryHits == hitsBefore + 1)

        // And another process's append after that shows too (through the folder opened again)
        try otherProcess("save", id: 100)
        #expect(try await cache.messages.loadLatest(in: url, limit: 30) == [99, 100].map { Self.message($0, in: url) })
    }
}
