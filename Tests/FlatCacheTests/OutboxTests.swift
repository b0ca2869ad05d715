import Foundation
import Testing

@testable import FlatCache

/// The outbox on its own: durable queueing, states, retry and cancel, restarts.
@Suite struct OutboxTests {
    typealias Cache = ChatCache<ChatMessage, ChatChannel, ChatUser>

    let folder = try! TemporaryFolder()

    func open() throws -> Cache {
        try Cache(directory: folder.url, configuration: Configuration(writeDelay: .zero, sizeLimit: nil))
    }

    static func typed(_ text: String, in channel: String = "trip") -> ChatMessage {
        ChatMessage(messageID: 0, channelURL: channel, createdAt: 1_000, text: text)
    }

    @Test func aQueuedMessageIsOnDiskWhenSendReturnsAndSurvivesAReopen() async throws {
        let cache = try open()
        let entry = try await cache.outbox.send(Self.typed("hello"), requestID: "r1")
        #expect(entry.requestID == "r1")
        guard case .pending = entry.state else { Issue.record("a new entry is pending"); return }
        // A new cache on the folder (a restart) reads it from the file.
        let reopened = try open()
        let entries = try await reopened.outbox.entries()
        #expect(entries.map(\.requestID) == ["r1"])
        #expect(entries.first?.message.text == "hello")
        // The sidecar names the file's bytes, as every file's does.
        let data = try Data(contentsOf: folder.url.appending(path: "outbox.lines"))
        let sidecar = try String(contentsOf: folder.url.appending(path: "outbox.lines.sha256"), encoding: .utf8)
        #expect(sidecar == SHA256Digest(of: data).hex + "  outbox.lines\n")
    }

    @Test func queuingTheSameRequestIDTwiceKeepsOneEntry() async throws {
        let cache = try open()
        try await cache.outbox.send(Self.typed("first"), requestID: "same")
        let again = try await cache.outbox.send(Self.typed("second"), requestID: "same")
        #expect(again.message.text == "first")
        #expect(try await cache.outbox.entries().count == 1)
    }

    @Test func entriesKeepTheOrderQueuedPerChannel() async throws {
        let cache = try open()
        for index in 0..<5 {
            try await cache.outbox.send(Self.typed("a\(index)", in: "a"), requestID: "a\(index)")
            try await cache.outbox.send(Self.typed("b\(index)", in: "b"), requestID: "b\(index)")
        }
        #expect(try await cache.outbox.entries(in: "a").map(\.requestID) == (0..<5).map { "a\($0)" })
        #expect(try await cache.outbox.entries(in: "b").map(\.requestID) == (0..<5).map { "b\($0)" })
    }

    @Test func cancelTakesAnEntryOutAndTheLastOneRemovesTheFile() async throws {
        let cache = try open()
        try await cache.outbox.send(Self.typed("one"), requestID: "1")
        try await cache.outbox.send(Self.typed("two"), requestID: "2")
        try await cache.outbox.cancel("1")
        #expect(try await open().outbox.entries().map(\.requestID) == ["2"])
        try await cache.outbox.cancel("2")
        #expect(!FileManager.default.fileExists(atPath: folder.url.appending(path: "outbox.lines").path))
        await #expect(throws: FlatCacheError.self) { try await cache.outbox.cancel("2") }
    }

    @Test func aRequestIDQueuedAgainAfterItLeftJoinsTheEndOfTheQueue() async throws {
        let cache = try open()
        try await cache.outbox.send(Self.typed("first"), requestID: "again")
        try await cache.outbox.send(Self.typed("second"), requestID: "other")
        try await cache.outbox.cancel("again")
        try await cache.outbox.send(Self.typed("first, typed again"), requestID: "again")
        #expect(try await cache.outbox.entries().map(\.requestID) == ["other", "again"])
        // Read from the file by another instance, the same.
        #expect(try await open().outbox.entries().map(\.requestID) == ["other", "again"])
    }

    @Test func badInputIsATypedError() async throws {
        let cache = try open()
        do {
            try await cache.outbox.send(Self.typed("x"), requestID: "")
            Issue.record("an empty request id was queued")
        } catch .emptyRequestID {}
        do {
            try await cache.outbox.send(Self.typed("x", in: ""))
            Issue.record("an empty channel URL was queued")
        } catch .emptyChannelURL {}
        do {
            try await cache.outbox.retry("missing")
            Issue.record("a missing entry was retried")
        } catch .outboxEntryNotFound(let id) {
            #expect(id == "missing")
        }
    }

    @Test func aLongLogIsCompactedAndKeepsEveryWaitingEntry() async throws {
        let cache = try open()
        for index in 0..<10 { try await cache.outbox.send(Self.typed("m\(index)"), requestID: "keep\(index)") }
        for index in 0..<100 {
            try await cache.outbox.send(Self.typed("gone \(index)"), requestID: "gone\(index)")
            try await cache.outbox.cancel("gone\(index)")
        }
        let lines = try String(contentsOf: folder.url.appending(path: "outbox.lines"), encoding: .utf8)
            .split(separator: "\n")
        #expect(lines.count < 70, "the log was never compacted: \(lines.count) lines")
        #expect(try await open().outbox.entries().map(\.requestID) == (0..<10).map { "keep\($0)" })
    }

    @Test func eventsReachEveryListenerOnce() async throws {
        let cache = try open()
        let first = cache.outbox.events()
        let second = cache.outbox.events()
        try await cache.outbox.send(Self.typed("one"), requestID: "1")
        try await cache.outbox.cancel("1")
        for stream in [first, second] {
            var iterator = stream.makeAsyncIterator()
            guard case .queued(let queued)? = await iterator.next(), case .cancelled(let cancelled)? = await iterator.next()
            else { Issue.record("expected queued, then cancelled"); return }
            #expect(queued.requestID == "1" && cancelled.requestID == "1")
        }
    }

    @Test func aChatMessageKeepsItsRequestIDAndWithoutOneItsVersion1Bytes() throws {
        let plain = Self.typed("hi")
        #expect(try plain.serialize().first == 1)
        var keyed = plain
        keyed.requestID = "r-42"
        let bytes = try keyed.serialize()
        #expect(bytes.first == 2)
        #expect(try ChatMessage(serializedData: bytes) == keyed)
        #expect(try ChatMessage(serializedData: try plain.serialize()).requestID == nil)
    }
}
