@testable import FlatCache
import Foundation
import Testing

/// A save serializes a channel's built-in messages into one buffer
/// (``ChatMessage/serialize(_:)``): each slice must be the very bytes the
/// message's own `serialize()` gives, whatever lies next to it.
@Suite struct MessageBatchSerializationTests {
    @Test func eachSliceIsTheMessagesOwnBytes() throws {
        // Given messages of every shape: with and without sender and request id, empty and long strings
        let long = String(repeating: "長い🙂", count: 20_000)  // lengths needing 3-byte prefixes
        let messages = Fixtures.messages(3) + [
            ChatMessage(messageID: 9, channelURL: "", channelKind: .open, createdAt: .min, text: ""),
            ChatMessage(
                messageID: .max, channelURL: long, createdAt: 1, updatedAt: -1,
                sender: ChatUser(userID: "", nickname: long), text: "x", customType: long, data: "\n", requestID: "request"),
            ChatMessage(messageID: 10, channelURL: "c", createdAt: 2, text: "last", requestID: ""),
        ]

        // When they are serialized together
        let lines = try ChatMessage.serialize(messages)

        // Then each line is the message's own bytes, and reads back as the message
        #expect(lines == (try messages.map { try $0.serialize() }))
        #expect(try lines.map { try ChatMessage(serializedData: $0) } == messages)
        #expect(try ChatMessage.serialize([]) == [])
    }

    @Test func theStorageSerializesMessagesTheSameWay() throws {
        let folder = try TemporaryFolder()
        let cache = try ChatCache(directory: folder.url)
        let messages = Fixtures.messages(50)
        #expect(try cache.engine.storage.serialize(messages) == (try messages.map { try $0.serialize() }))
    }
}
