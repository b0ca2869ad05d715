@testable import FlatCache
import Foundation
import Testing

/// A replace waiting for write-behind keeps what its channel's file held
/// (for another writer's saves in between) without decoding it: the file is
/// decoded only when another writer changed it before the write.
@Suite struct WriteBehindReplaceCostTests {
    let folder = try! TemporaryFolder()

    func cache(writeDelay: Duration = .seconds(60)) throws -> ChatCache<CountedMessage, ChatChannel, ChatUser> {
        try ChatCache(directory: folder.url, configuration: Configuration(maxMessagesPerChannel: 1_000, writeDelay: writeDelay))
    }

    func messages(_ range: ClosedRange<Int64>, in url: String) -> [CountedMessage] {
        range.map { CountedMessage($0, in: url) }
    }

    /// A new channel of 200 messages, saved by another instance; its URL.
    func channelSavedByAnotherInstance(_ name: String) throws -> String {
        let url = "\(name)-\(UUID())"
        try cache(writeDelay: .zero).messages.saveNow(messages(1...200, in: url))
        return url
    }

    @Test func anUnchangedReplaceOfAChannelNotInMemoryDecodesNothing() async throws {
        // Given a channel of 200 messages saved by another instance
        let url = try channelSavedByAnotherInstance("replace-cost")
        let writer = try cache()
        CountedMessage.decodes.reset(url)

        // When this instance, which never loaded it, replaces it with the same messages and flushes
        try await writer.messages.replace(messages(1...200, in: url), in: url)
        let result = try await writer.flush()

        // Then nothing was written and nothing of the file was decoded
        #expect(result.filesUnchanged == 1)
        #expect(CountedMessage.decodes.count(url) == 0, "the replace decoded the file it replaces")
    }

    @Test func aReplaceSerializesEachMessageOnce() async throws {
        // Given a channel of 200 messages saved by another instance
        let url = try channelSavedByAnotherInstance("replace-serialize")
        let writer = try cache()

        // When this instance replaces it with the same messages, then with one more, flushing each
        CountedMessage.serializations.reset(url)
        try await writer.messages.replace(messages(1...200, in: url), in: url)
        let unchanged = try await writer.flush()
        let afterUnchanged = CountedMessage.serializations.count(url)
        try await writer.messages.replace(messages(1...201, in: url), in: url)
        let written = try await writer.flush()

        // Then each message was serialized once per replace: the write took the bytes the replace made
        #expect(unchanged.filesUnchanged == 1 && written.filesWritten == 1)
        #expect(afterUnchanged == 200, "the replace found unchanged serialized its messages \(afterUnchanged) times")
        #expect(CountedMessage.serializations.count(url) - afterUnchanged == 201)
        #expect(try cache().messages.loadNow(in: url) == messages(1...201, in: url))
    }

    @Test func aReplaceOfAChannelNotInMemoryStillKeepsAnotherWritersSave() async throws {
        // Given a channel of 3 messages saved by another instance, and a replace waiting for write-behind here
        let url = "replace-rebase-\(UUID())"
        let other = try cache(writeDelay: .zero)
        try other.messages.saveNow(messages(1...3, in: url))
        let writer = try cache()
        try await writer.messages.replace(messages(1...2, in: url), in: url)

        // When the other instance saves a fourth before the flush
        try other.messages.saveNow(messages(4...4, in: url))
        CountedMessage.decodes.reset(url)
        try await writer.flush()

        // Then the fourth is kept (the file then was decoded, since it changed) and the third is gone
        #expect(try cache().messages.loadNow(in: url) == messages(1...2, in: url) + messages(4...4, in: url))
        #expect(CountedMessage.decodes.count(url) > 0)
    }
}
