import FlatCache
import Foundation
import Testing

/// A Matrix-like event: a string id, a room as its channel.
struct RoomEvent: MessageRecord, JSONCacheRecord, Equatable {
    var messageID: String
    var channelURL: String
    var createdAt: Int64
    var body: String
}

/// A record whose ids are UUIDs: it says itself when it was sent.
struct LocalEcho: MessageRecord, JSONCacheRecord, Equatable {
    var messageID: UUID
    var channelURL: String
    var createdAt: Int64
    var delivered: Bool
    var isSent: Bool { delivered }
}

/// Message ids beyond integers: a record type chooses its id type, and the
/// stores' rules (order, upsert, deletion, "not sent yet", appends) follow it.
@Suite struct StringIDTests {
    typealias RoomCache = ChatCache<RoomEvent, ChatChannel, ChatUser>
    let folder = try! TemporaryFolder()
    static let room = "!hiking:example.org"

    static func event(_ id: String, at createdAt: Int64, _ body: String? = nil) -> RoomEvent {
        RoomEvent(messageID: id, channelURL: room, createdAt: createdAt, body: body ?? "event \(id)")
    }

    func open() throws -> RoomCache {
        try RoomCache(directory: folder.url, configuration: Configuration(writeDelay: .zero, sizeLimit: nil))
    }

    @Test func stringIdsOrderUpsertAndLeaveUnsentOut() throws {
        let cache = try open()
        // Same time: ordered by id; an empty id is "not sent yet".
        let result = try cache.messages.blocking.save([
            Self.event("$b", at: 1_000), Self.event("$a", at: 1_000), Self.event("", at: 500), Self.event("$c", at: 2_000),
        ])
        #expect(result.recordsLeftOut == 1)
        #expect(try cache.messages.blocking.load(in: Self.room).map(\.messageID) == ["$a", "$b", "$c"])
        // An edit arrives with the same id: it replaces the cached one.
        _ = try cache.messages.blocking.save([Self.event("$b", at: 1_000, "edited")])
        #expect(try cache.messages.blocking.load(in: Self.room).map(\.body) == ["event $a", "edited", "event $c"])
        // A redaction removes it by its string id.
        _ = try cache.messages.blocking.applyChangeLog(updated: [], deletedMessageIDs: ["$a"], in: Self.room)
        #expect(try RoomCache(directory: folder.url).messages.blocking.load(in: Self.room).map(\.messageID) == ["$b", "$c"])
    }

    @Test func appendsOfNewerEventsWriteTheSameFileAsAReplace() async throws {
        let events = (1...12).map { Self.event("$event-\($0)", at: Int64($0) * 1_000) }
        let cache = try open()
        for event in events { try await cache.messages.save([event]) }
        try await cache.flush()
        let appended = try Data(contentsOf: folder.appending(try CacheFolderSummary.messagesFilePath(forChannel: Self.room)))

        let other = try TemporaryFolder()
        try RoomCache(directory: other.url).messages.replaceNow(events, in: Self.room)
        let replaced = try Data(contentsOf: other.appending(try CacheFolderSummary.messagesFilePath(forChannel: Self.room)))
        #expect(appended == replaced)
        #expect(try await RoomCache(directory: folder.url).messages.load(in: Self.room) == events)
        // A repeated id is not appended twice: it replaces.
        try await cache.messages.save([Self.event("$event-12", at: 12_000, "again")])
        #expect(try await cache.messages.load(in: Self.room).count == 12)
        #expect(try await cache.messages.load(in: Self.room).last?.body == "again")
    }

    @Test func pagesAndWrongChannelsWorkWithStringIds() throws {
        let cache = try open()
        let events = (1...10).map { Self.event("$\($0)", at: Int64($0) * 1_000) }
        _ = try cache.messages.blocking.replace(events, in: Self.room)
        #expect(try cache.messages.blocking.load(in: Self.room, before: events[5], limit: 2).map(\.messageID) == ["$4", "$5"])
        #expect(try cache.messages.blocking.load(in: Self.room, after: events[5], limit: 2).map(\.messageID) == ["$7", "$8"])
        #expect {
            _ = try cache.messages.blocking.replace([Self.event("$x", at: 1)], in: "!other:example.org")
        } throws: { error in
            guard case .misplacedMessage(let id, let channel, let expected)? = error as? FlatCacheError else { return false }
            return id == "$x" && channel == Self.room && expected == "!other:example.org"
        }
    }

    @Test func aTypeWithOtherIdsSaysWhenItWasSent() throws {
        let cache = try ChatCache<LocalEcho, ChatChannel, ChatUser>(directory: folder.url)
        let sent = LocalEcho(messageID: UUID(), channelURL: "c", createdAt: 1, delivered: true)
        let pending = LocalEcho(messageID: UUID(), channelURL: "c", createdAt: 2, delivered: false)
        #expect(try cache.messages.blocking.save([sent, pending]).recordsLeftOut == 1)
        #expect(try cache.messages.blocking.load(in: "c") == [sent])
        _ = try cache.messages.blocking.applyChangeLog(updated: [], deletedMessageIDs: [sent.messageID], in: "c")
        #expect(try cache.messages.blocking.load(in: "c").isEmpty)
    }
}
