@testable import FlatCache
import Foundation
import Testing

/// Format 2: a change log's edits and deletions are appended to the
/// channel's file as `*` and `-` lines, read back by key, compacted past
/// their bound, sealed under encryption, and pinned by goldens.
@Suite struct AppendedEditsTests {
    typealias Cache = ChatCache<ChatMessage, ChatChannel, ChatUser>
    let folder: TemporaryFolder
    let url = Fixtures.channelURL

    init() throws {
        folder = try TemporaryFolder()
    }

    var dataFile: URL { GoldenTests.messageFile(in: folder.url) }

    func lines() throws -> [Substring] {
        try String(decoding: Data(contentsOf: dataFile), as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).dropLast()
    }

    static func edited(_ id: Int64) -> ChatMessage {
        var message = Fixtures.message(id, at: id * 1_000, text: "edited \(id)")
        message.updatedAt = 9_000
        return message
    }

    /// Three messages, then a change log that edits message 2 and deletes message 3; a channel list of
    /// two, then trip's newer last message and plans removed; two users, then mina renamed and zoe removed.
    static func writeEdits(into root: URL, configuration: Configuration = Configuration()) throws {
        let cache = try Cache(directory: root, configuration: configuration)
        try cache.messages.replace(Fixtures.messages(3), in: Fixtures.channelURL)
        try cache.messages.applyChangeLog(updated: [edited(2)], deletedMessageIDs: [3], in: Fixtures.channelURL)
        try cache.channels.blocking.replace(with: [
            Fixtures.channel("plans", lastMessageAt: 3_000), Fixtures.channel("trip", lastMessageAt: 2_000),
        ])
        try cache.channels.blocking.save([Fixtures.channel("trip", lastMessageAt: 9_000)])
        try cache.channels.blocking.remove(channelURL: "plans")
        _ = try cache.users.blocking.save([Fixtures.mina, ChatUser(userID: "zoe", nickname: "Zoë", profileURL: "")])
        var renamed = Fixtures.mina
        renamed.nickname = "Mina P."
        _ = try cache.users.blocking.save([renamed])
        try cache.users.blocking.remove(userIDs: ["zoe"])
    }

    /// A channel of 40 messages written by one cache, and a new cache that has not read it.
    func cacheThatHasNotRead40Messages() async throws -> Cache {
        let writer = try Cache(directory: folder.url)
        try await writer.messages.replace(Fixtures.messages(40), in: url)
        try await writer.flush()
        return try Cache(directory: folder.url)
    }

    @Test func aChangeLogAppendsItsEditsAndDeletionsAndReadsBackByKey() throws {
        // Given a channel of 3 messages on disk
        let cache = try Cache(directory: folder.url)
        try cache.messages.replace(Fixtures.messages(3), in: url)
        let inode = try GoldenTests.inode(dataFile)

        // When a change log edits message 2 and deletes message 3
        try cache.messages.applyChangeLog(updated: [Self.edited(2)], deletedMessageIDs: [3], in: url)

        // Then the file is the same file with a `*` line and a `-` line appended
        #expect(try GoldenTests.inode(dataFile) == inode)
        let found = try lines()
        #expect(found.count == 5 && found[3].hasPrefix("*") && found[4].hasPrefix("-"))
        // and every reader sees messages 1 and 2 (edited): this instance, a new one, a first page from disk
        let expected = [Fixtures.message(1, at: 1_000), Self.edited(2)]
        #expect(try cache.messages.load(in: url) == expected)
        let fresh = try Cache(directory: folder.url)
        #expect(try fresh.messages.load(in: url) == expected)
        #expect(try Cache(directory: folder.url).messages.loadLatest(in: url, limit: 30) == expected)
        #expect(try fresh.verify().first { $0.path.hasPrefix("messages/") }?.records == 2)
    }

    @Test func aChangeLogIntoAChannelMemoryEvictedIsAppendedWithoutReadingTheFile() async throws {
        // Given a channel on disk whose records memory let go (a memory limit this small keeps only its summary)
        var configuration = Configuration()
        configuration.memoryLimit = 1_200
        let cache = try Cache(directory: folder.url, configuration: configuration)
        try await cache.messages.replace(Fixtures.messages(3), in: url)
        try await cache.flush()

        // When a change log comes while every read of a file fails
        FaultInjection.arm(.init(operation: .read, pathPrefix: folder.url.path, code: .EIO))
        defer { FaultInjection.disarm(below: folder.url.path) }
        try await cache.messages.applyChangeLog(updated: [Self.edited(2)], deletedMessageIDs: [3, 99], in: url)
        try await cache.flush()
        FaultInjection.disarm(below: folder.url.path)

        // Then its lines were appended all the same: an upsert, and a deletion for each id (the file was not read to
        // know which it holds), each deletion the id's 8 bytes, little-endian
        let found = try lines()
        #expect(found.count == 6 && found[3].hasPrefix("*"))
        #expect(found[4] == "-AwAAAAAAAAA=" && found[5] == "-YwAAAAAAAAA=")
        let expected = [Fixtures.message(1, at: 1_000), Self.edited(2)]
        #expect(try await cache.messages.load(in: url) == expected)
        #expect(try await Cache(directory: folder.url).messages.load(in: url) == expected)
    }

    @Test func aNewMessageAfterAChangeLogIntoAChannelMemoryEvictedIsAppendedWithoutReadingTheFile() async throws {
        // Given a channel on disk whose records memory let go, keeping their ids, and a change log appended to it
        var configuration = Configuration()
        configuration.memoryLimit = 1_200
        let cache = try Cache(directory: folder.url, configuration: configuration)
        try await cache.messages.replace(Fixtures.messages(3), in: url)
        try await cache.flush()
        try await cache.messages.applyChangeLog(updated: [Self.edited(2)], deletedMessageIDs: [], in: url)
        try await cache.flush()

        // When a new message comes while every read of a file fails
        FaultInjection.arm(.init(operation: .read, pathPrefix: folder.url.path, code: .EIO))
        defer { FaultInjection.disarm(below: folder.url.path) }
        try await cache.messages.save([Fixtures.message(4, at: 4_000)])
        try await cache.flush()
        FaultInjection.disarm(below: folder.url.path)

        // Then it was appended all the same: memory still knew the file's ids after the change log's lines
        #expect(try lines().count == 5 && lines()[4].hasPrefix("*"))
        let expected = [Fixtures.message(1, at: 1_000), Self.edited(2), Fixtures.message(3, at: 3_000), Fixtures.message(4, at: 4_000)]
        #expect(try await Cache(directory: folder.url).messages.load(in: url) == expected)
    }

    @Test func aChangeLogIntoAChannelNotReadSinceLaunchIsAppendedWithoutDecodingIt() async throws {
        // Given a channel of 40 messages on disk, and a cache that has not read it
        let cache = try await cacheThatHasNotRead40Messages()

        // When a change log edits message 2 and deletes message 3
        try await cache.messages.applyChangeLog(updated: [Self.edited(2)], deletedMessageIDs: [3], in: url)
        try await cache.flush()

        // Then its lines were appended, and memory holds none of the channel's records: its bytes were
        // checked against the sidecar, not decoded (a decode keeps the 40 records, some 20 KB)
        let found = try lines()
        #expect(found.count == 42 && found[40].hasPrefix("*") && found[41] == "-AwAAAAAAAAA=")
        let memory = try await cache.statistics().memoryBytes
        #expect(memory < 1_000, "memory holds \(memory) bytes")
        var expected = Fixtures.messages(40)
        expected[1] = Self.edited(2)
        expected.remove(at: 2)
        #expect(try await cache.messages.load(in: url) == expected)
        #expect(try await Cache(directory: folder.url).messages.load(in: url) == expected)

        // And the same change log again is found in the bytes: the file is read, and nothing appended
        let before = try Data(contentsOf: dataFile)
        let again = try Cache(directory: folder.url)
        try await again.messages.applyChangeLog(updated: [Self.edited(2)], deletedMessageIDs: [3], in: url)
        try await again.flush()
        #expect(try Data(contentsOf: dataFile) == before)
    }

    @Test func aNewMessageIntoAChannelNotReadSinceLaunchIsAppendedWithoutDecodingIt() async throws {
        // Given a channel of 40 messages on disk, and a cache that has not read it
        let cache = try await cacheThatHasNotRead40Messages()

        // When a new message comes
        try await cache.messages.save([Fixtures.message(41, at: 41_000)])
        try await cache.flush()

        // Then it is an upsert line, and memory holds none of the channel's records: its bytes were
        // checked against the sidecar, not decoded (a decode keeps the 40 records, some 20 KB)
        #expect(try lines().count == 41 && lines()[40].hasPrefix("*"))
        let memory = try await cache.statistics().memoryBytes
        #expect(memory < 1_000, "memory holds \(memory) bytes")

        // And the next one reads and decodes the file (memory knew none of its ids), an upsert line too,
        // and memory keeps the records for the ones after
        try await cache.messages.save([Fixtures.message(42, at: 42_000)])
        try await cache.flush()
        let found = try lines()
        #expect(found.count == 42 && found[41].hasPrefix("*"))
        #expect(try await cache.statistics().memoryBytes > 10_000)
        #expect(try await cache.messages.load(in: url) == Fixtures.messages(42))
        #expect(try await Cache(directory: folder.url).messages.load(in: url) == Fixtures.messages(42))

        // And the same message saved again by a cache that has not read the channel is found in the
        // bytes: the file is read, and nothing appended
        let before = try Data(contentsOf: dataFile)
        let again = try Cache(directory: folder.url)
        try await again.messages.save([Fixtures.message(41, at: 41_000)])
        try await again.flush()
        #expect(try Data(contentsOf: dataFile) == before)
    }

    @Test func aNewMessageSavedAgainAfterItWasAppendedUnreadIsNotAppendedAgain() async throws {
        // Given a channel of 40 on disk, and a cache that appended message 41 without reading it
        let cache = try await cacheThatHasNotRead40Messages()
        try await cache.messages.save([Fixtures.message(41, at: 41_000)])
        try await cache.flush()
        let before = try Data(contentsOf: dataFile)

        // When the same cache saves it again (a page from the server, synced again), then message 42 twice
        // before one write
        try await cache.messages.save([Fixtures.message(40, at: 40_000), Fixtures.message(41, at: 41_000)])
        try await cache.flush()
        #expect(try Data(contentsOf: dataFile) == before)
        try await cache.messages.save([Fixtures.message(42, at: 42_000)])
        try await cache.messages.save([Fixtures.message(42, at: 42_000)])
        try await cache.flush()

        // And a cache that has not read the channel saves message 43 twice before one write
        let fresh = try Cache(directory: folder.url)
        try await fresh.messages.save([Fixtures.message(43, at: 43_000)])
        try await fresh.messages.save([Fixtures.message(43, at: 43_000)])
        try await fresh.flush()

        // Then each message has one line
        let found = try lines()
        #expect(found.count == 43, "\(found.suffix(3))")
        #expect(try await Cache(directory: folder.url).messages.load(in: url) == Fixtures.messages(43))
    }

    @Test func aChangeLogIntoAFileNotReadSinceLaunchWhoseLastLineIsNotEndedIsReadFirst() async throws {
        // Given a channel whose last line lost its newline, the sidecar naming the file so (damage the digest cannot see)
        let writer = try Cache(directory: folder.url)
        try await writer.messages.replace(Fixtures.messages(3), in: url)
        try await writer.flush()
        var bytes = try Data(contentsOf: dataFile)
        bytes.removeLast()
        try bytes.write(to: dataFile)
        try FlushCrashTests.sidecarLine(for: bytes, name: dataFile.lastPathComponent).write(to: URL(fileURLWithPath: dataFile.path + ".sha256"))

        // When a cache that has not read it applies a change log
        let recorder = DamageRecorder()
        let cache = try Cache(directory: folder.url, configuration: recorder.configuration())
        try await cache.messages.applyChangeLog(updated: [Self.edited(2)], deletedMessageIDs: [3], in: url)
        try await cache.flush()

        // Then the file is read first, which reports it, and the channel holds the change log's message: no line was
        // appended onto the unended one (which would have glued the two and lost the edit with the damaged file)
        #expect(recorder.files.count == 1)
        #expect(try await Cache(directory: folder.url).messages.load(in: url) == [Self.edited(2)])
    }

    @Test func aByteSearchFindsALineWhereverTheFileHoldsItAndNothingElse() {
        let (one, two, three) = (Data("record one".utf8), Data("record two".utf8), Data("three".utf8))
        let body = RecordLines.encode([one]) + RecordLines.encode([AppendedLine(kind: .upsert, record: two)], sealer: nil, fileName: "f")
            + RecordLines.encode([AppendedLine(kind: .deletion, record: three)], sealer: nil, fileName: "f")
        // A canonical line, an upsert after its `*`, a deletion with its `-`
        #expect(RecordLines.mayHold([AppendedLine(kind: .upsert, record: one)], in: body))
        #expect(RecordLines.mayHold([AppendedLine(kind: .upsert, record: two)], in: body))
        #expect(RecordLines.mayHold([AppendedLine(kind: .deletion, record: three)], in: body))
        // Not a deletion where an upsert of the same bytes is, nor a line that is part of another
        #expect(!RecordLines.mayHold([AppendedLine(kind: .deletion, record: two)], in: body))
        #expect(!RecordLines.mayHold([AppendedLine(kind: .upsert, record: Data("record".utf8))], in: body))
        #expect(!RecordLines.mayHold([AppendedLine(kind: .upsert, record: Data("record one!".utf8))], in: body))
        #expect(!RecordLines.mayHold([], in: body) && !RecordLines.mayHold([AppendedLine(kind: .upsert, record: one)], in: Data()))
    }

    @Test func theSameChangeLogTwiceIntoAnEncryptedChannelNotReadSinceLaunchAppendsNothing() async throws {
        // Given an encrypted channel on disk, a change log applied to it, and a cache that has not read it
        var configuration = Configuration()
        configuration.encryption = .aes256gcm(key: EncryptedGoldenTests.key)
        let writer = try Cache(directory: folder.url, configuration: configuration)
        try await writer.messages.replace(Fixtures.messages(3), in: url)
        try await writer.messages.applyChangeLog(updated: [Self.edited(2)], deletedMessageIDs: [3], in: url)
        try await writer.flush()
        let name = try FileManager.default.contentsOfDirectory(atPath: folder.appending("messages").path).first { $0.hasSuffix(".lines") }!
        let file = folder.appending("messages/" + name)
        let before = try Data(contentsOf: file)
        let cache = try Cache(directory: folder.url, configuration: configuration)

        // When the same change log comes again
        try await cache.messages.applyChangeLog(updated: [Self.edited(2)], deletedMessageIDs: [3], in: url)
        try await cache.flush()

        // Then nothing is appended: sealed lines differ at every sealing, so no byte search tells a
        // repeat, and the file is read and decoded first
        #expect(try Data(contentsOf: file) == before)
    }

    @Test func anEvictedChannelThatMightPassItsLimitIsReadFirst() async throws {
        // Given a channel of 3 at its limit of 3, evicted from memory
        var configuration = Configuration(maxMessagesPerChannel: 3)
        configuration.memoryLimit = 1_200
        let cache = try Cache(directory: folder.url, configuration: configuration)
        try await cache.messages.replace(Fixtures.messages(3), in: url)
        try await cache.flush()
        // When a change log's upsert might add a record (the file is not known to hold it), the file is read
        FaultInjection.arm(.init(operation: .read, pathPrefix: folder.url.path, code: .EIO))
        defer { FaultInjection.disarm(below: folder.url.path) }
        try await cache.messages.applyChangeLog(updated: [Self.edited(2)], deletedMessageIDs: [], in: url)
        await #expect(throws: FlatCacheError.self) { try await cache.flush() }
    }

    @Test func theSameChangeLogTwiceAppendsNothingTheSecondTime() throws {
        try Self.writeEdits(into: folder.url)
        let before = try Data(contentsOf: dataFile)
        let cache = try Cache(directory: folder.url)
        try cache.messages.applyChangeLog(updated: [Self.edited(2)], deletedMessageIDs: [3], in: url)
        #expect(try Data(contentsOf: dataFile) == before)
    }

    @Test func aNewMessageAfterAppendedLinesIsAnUpsertLineToo() throws {
        try Self.writeEdits(into: folder.url)
        let cache = try Cache(directory: folder.url)
        try cache.messages.save([Fixtures.message(4, at: 4_000)])
        let found = try lines()
        #expect(found.count == 6 && found[5].hasPrefix("*"))
        #expect(try Cache(directory: folder.url).messages.load(in: url).map(\.messageID) == [1, 2, 4])
    }

    @Test func passingTheBoundCompactsTheFileToCanonicalLines() throws {
        // Given a channel of 3 messages (bound: 16 appended lines)
        let cache = try Cache(directory: folder.url)
        try cache.messages.replace(Fixtures.messages(3), in: url)
        // When 16 edits are appended, one change log each
        for round in 1...16 {
            var message = Fixtures.message(2, at: 2_000, text: "edit \(round)")
            message.updatedAt = Int64(round)
            try cache.messages.applyChangeLog(updated: [message], deletedMessageIDs: [], in: url)
        }
        #expect(try lines().count == 19)
        let inode = try GoldenTests.inode(dataFile)
        // Then the 17th rewrites the file: canonical lines only, as a fresh replace of its records writes them
        var last = Fixtures.message(2, at: 2_000, text: "edit 17")
        last.updatedAt = 17
        try cache.messages.applyChangeLog(updated: [last], deletedMessageIDs: [], in: url)
        #expect(try GoldenTests.inode(dataFile) != inode)
        #expect(try lines().count == 3 && lines().allSatisfy { !$0.hasPrefix("*") && !$0.hasPrefix("-") })
        #expect(try Cache(directory: folder.url).messages.load(in: url).map(\.text) == ["message 1", "edit 17", "message 3"])
    }

    @Test func aPlainLineAfterAnAppendedOneIsDamage() throws {
        // Given a file with an appended line, then a canonical line added after it (by hand, sidecar fixed)
        try Self.writeEdits(into: folder.url)
        var bytes = try Data(contentsOf: dataFile)
        bytes += RecordLines.encode([try Fixtures.message(7, at: 7_000).serialize()])
        try bytes.write(to: dataFile)
        try FlushCrashTests.sidecarLine(for: bytes, name: dataFile.lastPathComponent).write(to: URL(fileURLWithPath: dataFile.path + ".sha256"))
        // Then a load treats it as damaged: a miss, the file moved aside
        let recorder = DamageRecorder()
        #expect(try Cache(directory: folder.url, configuration: recorder.configuration()).messages.load(in: url) == [])
        #expect(recorder.files.first?.problem == "line 6 is a plain record line after an appended (* or -) line")
    }

    @Test func anEncryptedFileSealsItsAppendedLinesAndAFlippedKindDoesNotOpen() throws {
        // Given an encrypted folder whose channel took a change log
        var configuration = Configuration()
        configuration.encryption = .aes256gcm(key: EncryptedGoldenTests.key)
        try Self.writeEdits(into: folder.url, configuration: configuration)
        let name = try FileManager.default.contentsOfDirectory(atPath: folder.appending("messages").path).first { $0.hasSuffix(".lines") }!
        let file = folder.appending("messages/" + name)
        let text = try String(contentsOf: file, encoding: .utf8)
        // Then no message id or text is in the clear, and it reads back
        #expect(!text.contains("edited") && text.split(separator: "\n").count == 5)
        #expect(try Cache(directory: folder.url, configuration: configuration).messages.load(in: url) == [Fixtures.message(1, at: 1_000), Self.edited(2)])
        // When the deletion's `-` is changed to `*` (sidecar fixed), the line no longer opens
        var lines = text.split(separator: "\n").map(String.init)
        lines[4] = "*" + lines[4].dropFirst()
        let bytes = Data((lines.joined(separator: "\n") + "\n").utf8)
        try bytes.write(to: file)
        try FlushCrashTests.sidecarLine(for: bytes, name: name).write(to: URL(fileURLWithPath: file.path + ".sha256"))
        let recorder = DamageRecorder()
        var damaged = recorder.configuration()
        damaged.encryption = configuration.encryption
        #expect(try Cache(directory: folder.url, configuration: damaged).messages.load(in: url) == [])
        #expect(recorder.files.first?.problem.hasPrefix("line 5 does not open") == true)
    }

    @Test func exportAndMigrationWriteTheRecordsTheAppendedLinesLeave() async throws {
        try Self.writeEdits(into: folder.url)
        let cache = try Cache(directory: folder.url)
        var configuration = Configuration()
        configuration.encryption = .aes256gcm(key: EncryptedGoldenTests.key)
        let migrated = try await cache.migrate(encryption: configuration.encryption)
        #expect(try await migrated.messages.load(in: url) == [Fixtures.message(1, at: 1_000), Self.edited(2)])
        let name = try FileManager.default.contentsOfDirectory(atPath: folder.appending("messages").path).first { $0.hasSuffix(".lines") }!
        #expect(try String(contentsOf: folder.appending("messages/" + name), encoding: .utf8).split(separator: "\n").count == 2)
    }

    @Test func aJournalEntryIsPinnedByAGoldenAndReadsBack() throws {
        // A fixed entry of two appends (docs/format.md, "The journal"): its bytes are pinned, and they read back
        let appends = [
            Journal.Append(
                file: "messages/a.lines", inode: 42, offset: 100, before: SHA256Digest(of: Data("before".utf8)),
                bytes: Data("*QUJD\n".utf8), after: SHA256Digest(of: Data("after".utf8))),
            Journal.Append(
                file: "channels.lines", inode: 7, offset: 3, before: SHA256Digest(of: Data("b".utf8)),
                bytes: Data("-dHJpcA==\n".utf8), after: SHA256Digest(of: Data("a".utf8))),
        ]
        let line = Journal.line(for: appends)
        try FileManager.default.createDirectory(at: folder.appending("entry"), withIntermediateDirectories: true)
        try line.write(to: folder.appending("entry/journal"))
        try GoldenFolder.assertMatches(folder.appending("entry"), golden: "journal-entry")
        #expect(Journal.entries(in: line) == [appends])
        // A line cut short is skipped, and the entry after it still reads
        #expect(Journal.entries(in: line.prefix(line.count - 9) + line) == [appends])
        // and a changed byte fails its digest
        var damaged = line
        damaged[10] = damaged[10] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(Journal.entries(in: damaged).isEmpty)
    }

    @Test func theEditsArePinnedByGoldens() throws {
        try Self.writeEdits(into: folder.appending("plain"))
        try GoldenFolder.assertMatches(folder.appending("plain"), golden: "appended-edits")
        var configuration = Configuration()
        configuration.encryption = .aes256gcm(key: EncryptedGoldenTests.key)
        configuration.nonceSource = .counter(NonceCounter(start: 1))
        try Self.writeEdits(into: folder.appending("sealed"), configuration: configuration)
        try? FileManager.default.removeItem(at: folder.appending("sealed/usage.lines"))
        try? FileManager.default.removeItem(at: folder.appending("sealed/usage.lines.sha256"))
        try? FileManager.default.removeItem(at: folder.appending("plain/usage.lines"))
        try GoldenFolder.assertMatches(folder.appending("sealed"), golden: "appended-edits-sealed")
    }

    @Test func aChannelSaveAndARemovalAreAppendedToTheChannelList() throws {
        // Given a channel list of two on disk
        let cache = try Cache(directory: folder.url)
        try cache.channels.blocking.replace(with: [
            Fixtures.channel("plans", lastMessageAt: 3_000), Fixtures.channel("trip", lastMessageAt: 2_000),
        ])
        let file = folder.appending("channels.lines")
        let inode = try GoldenTests.inode(file)

        // When trip gets a newer last message, and plans is removed
        try cache.channels.blocking.save([Fixtures.channel("trip", lastMessageAt: 9_000)])
        try cache.channels.blocking.remove(channelURL: "plans")

        // Then the same file took a `*` line and a `-` line naming plans (its URL's UTF-8)
        #expect(try GoldenTests.inode(file) == inode)
        let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 4 && lines[2].hasPrefix("*") && lines[3] == "-cGxhbnM=")
        // and every reader sees trip alone, with its new last message
        let fresh = try Cache(directory: folder.url)
        #expect(try fresh.channels.blocking.load() == [Fixtures.channel("trip", lastMessageAt: 9_000)])
        #expect(try fresh.blocking.verify().allSatisfy(\.isValid))
    }

    @Test func aUserSaveAndARemovalAreAppendedToTheUserList() throws {
        let cache = try Cache(directory: folder.url)
        let zoe = ChatUser(userID: "zoe", nickname: "Zoë", profileURL: "")
        _ = try cache.users.blocking.save([Fixtures.mina, zoe])
        let file = folder.appending("users.lines")
        let inode = try GoldenTests.inode(file)
        var renamed = Fixtures.mina
        renamed.nickname = "Mina P."
        _ = try cache.users.blocking.save([renamed])
        try cache.users.blocking.remove(userIDs: ["zoe"])
        #expect(try GoldenTests.inode(file) == inode)
        let lines = try String(contentsOf: file, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 4 && lines[2].hasPrefix("*") && lines[3] == "-em9l")
        #expect(try Cache(directory: folder.url).users.blocking.load() == [renamed])
    }
}
