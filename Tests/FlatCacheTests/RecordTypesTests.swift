@testable import FlatCache
import Foundation
import Testing

/// A folder says which record types wrote it: opening it with others is a
/// typed error naming both, never a quarantine; an app converts it with
/// `migrate`, or starts over with `eraseOnRecordTypeChange`, never silently.
@Suite struct RecordTypesTests {
    typealias SDKCache = ChatCache<SDKMessage, SDKChannel, SDKUser>

    let folder: TemporaryFolder

    init() throws {
        folder = try TemporaryFolder()
    }

    var builtIn: RecordTypes {
        RecordTypes(messages: "FlatCache.ChatMessage", channels: "FlatCache.ChatChannel", users: "FlatCache.ChatUser")
    }

    /// A built-in cache with two channels, their messages and a user.
    func writeBuiltInCache() throws {
        let cache = try ChatCache(directory: folder.url)
        try cache.channels.blocking.replace(with: [Fixtures.channel("a", lastMessageAt: 3_000), Fixtures.channel("b", lastMessageAt: 1)])
        try cache.messages.blocking.save(Fixtures.messages(3, in: "a") + Fixtures.messages(2, in: "b"))
        try cache.users.blocking.save([Fixtures.mina])
    }

    func snapshot() throws -> URL {
        let copy = FileManager.default.temporaryDirectory.appendingPathComponent("flatcache-snapshot-\(UUID().uuidString)")
        try FileManager.default.copyItem(at: folder.url, to: copy)
        return copy
    }

    @Test func aNewFolderRecordsItsTypes() throws {
        _ = try ChatCache(directory: folder.url)
        #expect(try String(contentsOf: folder.appending("records"), encoding: .utf8)
            == "messages FlatCache.ChatMessage\nchannels FlatCache.ChatChannel\nusers FlatCache.ChatUser\n")
        #expect(ChatCache<ChatMessage, ChatChannel, ChatUser>.recordTypes == builtIn)
        #expect(SDKCache.recordTypes.messages.hasSuffix(".SDKMessage"))
    }

    @Test func otherTypesAreATypedErrorAndTheFolderIsUntouched() throws {
        // Given a cache written with the built-in types
        try writeBuiltInCache()
        let before = try snapshot()
        defer { try? FileManager.default.removeItem(at: before) }
        let recorder = DamageRecorder()

        // When an app opens it with its own SDK types
        #expect { try SDKCache(directory: folder.url, configuration: recorder.configuration()) } throws: { error in
            guard case FlatCacheError.recordTypeMismatch(let directory, let cached, let requested) = error else { return false }
            let text = "\(error)"
            return directory == folder.url && cached == builtIn && requested == SDKCache.recordTypes
                && text.contains("FlatCache.ChatMessage") && text.contains("SDKMessage")
        }

        // Then nothing was read as damaged, moved or written
        #expect(recorder.files.isEmpty)
        #expect(try GoldenFolder.differences(between: folder.url, and: before).isEmpty)
        // and the folder still opens with its own types (read-only too)
        #expect(try ChatCache(directory: folder.url).messages.load(in: "a").count == 3)
        #expect { try SDKCache(directory: folder.url, configuration: Configuration(readOnly: true)) } throws: { error in
            guard case FlatCacheError.recordTypeMismatch = error else { return false }
            return true
        }
    }

    @Test func aFolderWrittenBeforeTheRecordsFileIsAdoptedByItsFirstWritableOpen() throws {
        // Given a format-1 folder from before the records file (the golden sample cache without it)
        let copy = folder.appending("old")
        try FileManager.default.copyItem(at: GoldenFolder.url("sample-cache"), to: copy)
        try FileManager.default.removeItem(at: copy.appendingPathComponent("records"))

        // When it is opened read-only, it reads and records nothing
        let reader = try ChatCache(directory: copy, configuration: Configuration(readOnly: true))
        #expect(try reader.channels.blocking.load().count == 5)
        #expect(!FileManager.default.fileExists(atPath: copy.appendingPathComponent("records").path))

        // When it is opened for writing, it reads and records the types it was opened with
        let cache = try ChatCache(directory: copy)
        #expect(try cache.channels.blocking.load().count == 5)
        #expect(try GoldenFolder.differences(between: copy, and: GoldenFolder.url("sample-cache")).isEmpty)
    }

    @Test func anUnreadableRecordsFileIsRefusedNotGuessed() throws {
        try writeBuiltInCache()
        try Data("messages\n".utf8).write(to: folder.appending("records"))
        #expect { try ChatCache(directory: folder.url) } throws: { error in
            guard case FlatCacheError.recordTypeMismatch(_, let cached, _) = error else { return false }
            return cached.messages == "(unreadable)"
        }
    }

    @Test func eraseOnRecordTypeChangeStartsOverAndSaysSo() throws {
        try writeBuiltInCache()
        let log = LogRecorder()

        let cache = try SDKCache(
            directory: folder.url, configuration: Configuration(logger: log.logger, eraseOnRecordTypeChange: true))

        #expect(try cache.channels.blocking.load().isEmpty)
        #expect(try cache.messages.blocking.loadIfCached(in: "a") == nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).sorted() == ["format", "records"])
        #expect(log.entries.contains { $0.level == .notice && $0.message.contains("erased") })
        try cache.messages.blocking.save([SDKMessage(messageID: 1, channelURL: "a", createdAt: 1, body: "hi")])
        #expect(try SDKCache(directory: folder.url).messages.load(in: "a").count == 1)
    }

    @Test func migrateConvertsEveryRecordToTheNewTypes() throws {
        // Given a built-in cache
        try writeBuiltInCache()

        // When the app migrates it to its SDK types, leaving user "mina" out
        let migrated: SDKCache = try ChatCache(directory: folder.url).migrate(
            message: { SDKMessage(messageID: $0.messageID, channelURL: $0.channelURL, createdAt: $0.createdAt, body: $0.text) },
            channel: { SDKChannel(channelURL: $0.channelURL, isGroupChannel: true, lastMessageAt: $0.lastMessageAt) },
            user: { _ in nil })

        // Then the folder holds the new types, with every converted record
        let reopened = try SDKCache(directory: folder.url)
        for cache in [migrated, reopened] {
            #expect(try cache.channels.blocking.load().map(\.channelURL) == ["a", "b"])
            #expect(try cache.messages.blocking.load(in: "a").map(\.body) == ["message 1", "message 2", "message 3"])
            #expect(try cache.messages.blocking.load(in: "b").count == 2)
            #expect(try cache.users.blocking.load().isEmpty)
        }
        #expect { try ChatCache(directory: folder.url) } throws: { error in
            guard case FlatCacheError.recordTypeMismatch = error else { return false }
            return true
        }
    }

    @Test func migrateCarriesTheOutboxOverInOrderWithItsStates() async throws {
        try writeBuiltInCache()
        let old = try ChatCache(directory: folder.url)
        for index in 1...3 {
            try await old.outbox.send(
                ChatMessage(messageID: 0, channelURL: "a", createdAt: 0, text: "typed \(index)"), requestID: "r\(index)")
        }
        _ = try await old.outbox.beginSending("r2")
        try await old.outbox.sendFailed("r2", failure: "too long", forGood: true)

        // Typed messages convert like cached ones; one that converts to nil goes.
        let migrated: SDKCache = try old.blocking.migrate(
            message: { $0.text == "typed 3" ? nil : SDKMessage(messageID: $0.messageID, channelURL: $0.channelURL, createdAt: $0.createdAt, body: $0.text) },
            channel: { SDKChannel(channelURL: $0.channelURL, isGroupChannel: true, lastMessageAt: $0.lastMessageAt) },
            user: { _ in nil })

        for cache in [migrated, try SDKCache(directory: folder.url)] {
            let entries = try await cache.outbox.entries()
            #expect(entries.map(\.requestID) == ["r1", "r2"])
            #expect(entries.map(\.message.body) == ["typed 1", "typed 2"])
            guard case .failed("too long", 1)? = entries.last?.state else {
                Issue.record("the failed entry is \(String(describing: entries.last?.state))")
                continue
            }
        }
    }

    @Test func aFailedConversionLeavesTheFolderAsItWas() throws {
        try writeBuiltInCache()
        let before = try snapshot()
        defer { try? FileManager.default.removeItem(at: before) }
        struct Refused: Error {}

        #expect {
            let _: SDKCache = try ChatCache(directory: folder.url).migrate(
                message: { _ in throw Refused() },
                channel: { SDKChannel(channelURL: $0.channelURL, isGroupChannel: true, lastMessageAt: 0) },
                user: { SDKUser(userID: $0.userID) })
        } throws: { error in
            guard case FlatCacheError.conversionFailed(let type, let underlying) = error else { return false }
            return type == "ChatMessage" && underlying is Refused
        }
        #expect(try GoldenFolder.differences(between: folder.url, and: before).isEmpty)
    }

    @Test func aFixedRecordTypeNameSurvivesARename() throws {
        struct RenamedUser: UserRecord, JSONCacheRecord, Equatable {
            static var recordTypeName: String { "MyApp.User" }
            var userID: String
        }
        typealias Renamed = ChatCache<SDKMessage, SDKChannel, RenamedUser>
        try Renamed(directory: folder.url).users.save([RenamedUser(userID: "u")])
        #expect(try String(contentsOf: folder.appending("records"), encoding: .utf8).hasSuffix("users MyApp.User\n"))
        #expect(try Renamed(directory: folder.url).users.load() == [RenamedUser(userID: "u")])
    }

    // MARK: - A summary without the types

    @Test func aSummaryCountsTheRecordsOfAnyTypesAndChangesNothing() throws {
        // Given a folder written with SDK types, one of its message files damaged
        let cache = try SDKCache(directory: folder.url)
        try cache.channels.blocking.save([SDKChannel(channelURL: "a", isGroupChannel: true, lastMessageAt: 5)])
        try cache.messages.blocking.save((1...4).map { SDKMessage(messageID: $0, channelURL: "a", createdAt: $0, body: "m\($0)") })
        try cache.messages.blocking.save([SDKMessage(messageID: 1, channelURL: "b", createdAt: 1, body: "x")])
        let messages = folder.appending("messages")
        let damaged = try #require(try FileManager.default.contentsOfDirectory(atPath: messages.path).sorted().first { $0.hasSuffix(".lines") })
        try Data("not base64!\n".utf8).write(to: messages.appendingPathComponent(damaged))
        let before = try snapshot()
        defer { try? FileManager.default.removeItem(at: before) }

        // When a tool reads its summary
        let summary = try CacheFolderSummary.read(directory: folder.url)

        // Then it names the types, counts lines per file and reports the damaged one, moving nothing
        #expect(summary.recordTypes == SDKCache.recordTypes)
        #expect(summary.files.map(\.role) == [.channels, .messages, .messages])
        #expect(summary.files[0].records == 1 && summary.files[0].problem == nil)
        let bad = try #require(summary.files.first { $0.path == "messages/" + damaged })
        #expect(bad.records == 0 && bad.problem != nil && bad.bytes == 12)
        let messageCounts = summary.files.filter { $0.role == .messages }.map(\.records).sorted()
        #expect(messageCounts == [0, 1] || messageCounts == [0, 4])  // channel b's 1 or a's 4, the other damaged
        #expect(summary.files.allSatisfy { $0.modifiedAt > 1_700_000_000_000 })
        #expect(try GoldenFolder.differences(between: folder.url, and: before).isEmpty)
    }

}

/// What a second, black-box reading of the record-type promises found.
@Suite struct RecordTypesEdgeTests {
    typealias SDKCache = ChatCache<SDKMessage, SDKChannel, SDKUser>

    let folder: TemporaryFolder

    init() throws {
        folder = try TemporaryFolder()
        let cache = try ChatCache(directory: folder.url)
        try cache.channels.blocking.replace(with: [Fixtures.channel("a", lastMessageAt: 3_000)])
        try cache.messages.blocking.save(Fixtures.messages(3, in: "a") + Fixtures.messages(2, in: "b"))
    }

    @Test func aConvertedRecordASaveWouldRefuseLeavesTheFolderAsItWas() throws {
        let before = FileManager.default.temporaryDirectory.appendingPathComponent("flatcache-before-\(UUID().uuidString)")
        try FileManager.default.copyItem(at: folder.url, to: before)
        defer { try? FileManager.default.removeItem(at: before) }

        #expect {
            let _: SDKCache = try ChatCache(directory: folder.url).migrate(
                message: { SDKMessage(messageID: $0.messageID, channelURL: $0.channelURL == "b" ? "" : $0.channelURL, createdAt: $0.createdAt, body: $0.text) },
                channel: { SDKChannel(channelURL: $0.channelURL, isGroupChannel: true, lastMessageAt: 0) },
                user: { SDKUser(userID: $0.userID) })
        } throws: { error in
            guard case FlatCacheError.emptyChannelURL = error else { return false }
            return true
        }
        #expect(try GoldenFolder.differences(between: folder.url, and: before).isEmpty)
        #expect(try ChatCache(directory: folder.url).messages.load(in: "b").count == 2)
    }

    @Test func anInstanceOfTheOldTypesMeetsTheMigratedDataWithAnErrorNotAQuarantine() throws {
        let old = try ChatCache(directory: folder.url)
        let _: SDKCache = try old.blocking.migrate(
            message: { SDKMessage(messageID: $0.messageID, channelURL: $0.channelURL, createdAt: $0.createdAt, body: $0.text) },
            channel: { SDKChannel(channelURL: $0.channelURL, isGroupChannel: true, lastMessageAt: 0) },
            user: { SDKUser(userID: $0.userID) })

        for load in [{ _ = try old.messages.blocking.load(in: "a") }, { _ = try old.channels.blocking.load() }, { _ = try old.blocking.verify() }] {
            #expect { try load() } throws: { error in
                guard case FlatCacheError.recordTypeMismatch(_, let cached, let requested) = error else { return false }
                return cached == SDKCache.recordTypes && requested == ChatCache<ChatMessage, ChatChannel, ChatUser>.recordTypes
            }
        }
        #expect(!FileManager.default.fileExists(atPath: folder.appending("quarantine").path))
        #expect(try SDKCache(directory: folder.url).messages.load(in: "a").count == 3)
    }

    @Test func aNameEndingInACarriageReturnReopens() throws {
        struct Member: UserRecord, JSONCacheRecord {
            static var recordTypeName: String { "Users v2\r" }
            var userID: String
        }
        let other = folder.appending("cr")
        try ChatCache<SDKMessage, SDKChannel, Member>(directory: other).users.save([Member(userID: "u")])
        #expect(try ChatCache<SDKMessage, SDKChannel, Member>(directory: other).users.load().map(\.userID) == ["u"])
    }
}
