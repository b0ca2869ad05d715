import FlatCache
import Foundation
import Testing

/// Retention is a promise about what is shown: a message past a channel's
/// newest `maxMessagesPerChannel` stays dropped, even while its line waits
/// in the file's slack (appends) and a later change removes newer messages.
@Suite struct RetentionAfterDeletionTests {
    let folder = try! TemporaryFolder()
    static let url = "trip"

    static func message(_ id: Int64) -> ChatMessage { Fixtures.message(id, at: id * 1_000, in: url) }

    func cache(limit: Int) throws -> ChatCache<ChatMessage, ChatChannel, ChatUser> {
        try ChatCache(directory: folder.url, configuration: Configuration(maxMessagesPerChannel: limit, writeDelay: .seconds(60)))
    }

    func lineCount() throws -> Int {
        let path = try CacheFolderSummary.messagesFilePath(forChannel: Self.url)
        return try Data(contentsOf: folder.appending(path)).filter { $0 == UInt8(ascii: "\n") }.count
    }

    @Test(arguments: [1, 2, 8, 20, 200])
    func aMessageRetentionDroppedStaysDroppedWhenNewerOnesAreDeleted(limit: Int) async throws {
        // Given a channel filled one message at a time up to its limit plus the slack: the file holds spare lines
        let cache = try cache(limit: limit)
        let total = limit + max(8, limit / 4)
        for id in 1...Int64(total) { try cache.messages.saveNow([Self.message(id)]) }
        #expect(try lineCount() == total, "the spare lines this test is about")
        var shown = ((total - limit + 1)...total).map { Self.message(Int64($0)) }
        #expect(try await cache.messages.load(in: Self.url) == shown)

        func expectShown(_ step: String, written: Bool = true) async throws {
            #expect(try await cache.messages.load(in: Self.url).map(\.messageID) == shown.map(\.messageID), "\(step)")
            guard written else { return }
            #expect(try self.cache(limit: limit).messages.loadNow(in: Self.url).map(\.messageID) == shown.map(\.messageID),
                    "\(step), another instance")
        }

        // When the newest is deleted through a change log (synchronous)
        try cache.messages.applyChangeLogSynchronously(updated: [], deletedMessageIDs: [Int64(total)], in: Self.url)
        shown.removeLast()
        // Then the message retention dropped before it does not come back
        try await expectShown("after a synchronous delete")

        // nor after an async delete of the oldest shown, written by a flush
        if let oldest = shown.first {
            try await cache.messages.applyChangeLog(updated: [], deletedMessageIDs: [oldest.messageID], in: Self.url)
            shown.removeFirst()
            try await expectShown("after an async delete", written: false)
        }
        try await cache.flush()
        try await expectShown("after the flush")

        // nor after a range of the server's history replaced with nothing
        if let newest = shown.last {
            try await cache.messages.replace([], in: Self.url, covering: newest.createdAt...newest.createdAt)
            shown.removeLast()
            try await expectShown("after replace(_:in:covering:)")
        }

        // nor when a new message comes after all that
        try cache.messages.saveNow([Self.message(Int64(total + 1))])
        shown.append(Self.message(Int64(total + 1)))
        try await expectShown("after a new message")
    }
}
