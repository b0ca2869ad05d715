@testable import FlatCache
import Foundation
import Testing

/// `verify` checks every file the format defines, not only the record
/// files: continuity files, `outbox.lines`, `usage.lines`, `records` and `preloaded`, for
/// the cache's own record types and for a folder of other types. An
/// unfinished append is a note, not damage, and a repair cuts it off.
@Suite struct VerifyEveryFileTests {
    typealias Cache = ChatCache<ChatMessage, ChatChannel, ChatUser>
    let folder: TemporaryFolder
    let url = "plans"

    init() throws {
        folder = try TemporaryFolder()
    }

    var root: URL { folder.appending("cache") }

    /// A folder holding one of every file the format defines.
    func writeEveryFile() async throws {
        let cache = try Cache(directory: root)
        try await cache.channels.replace(with: [Fixtures.channel(url, lastMessageAt: 3_000)])
        try await cache.channels.setChangeLogToken("list-1")
        try await cache.messages.replace(Fixtures.messages(3, in: url), in: url, covering: ChannelContinuity.channelStart...5_000)
        try await cache.messages.setChangeLogToken("changes-1", in: url)
        try await cache.users.save([Fixtures.mina])
        try await cache.outbox.send(ChatMessage(messageID: 0, channelURL: url, createdAt: 4_000, text: "queued"), requestID: "r-1")
        try await cache.close()  // writes usage.lines
        try Data((String(repeating: "ab", count: 32) + "\n").utf8).write(to: root.appendingPathComponent("preloaded"))
    }

    var key: String { get throws { try CacheFolderSummary.messagesFilePath(forChannel: url).dropFirst(9).dropLast(6).description } }

    var everyFile: [String] {
        get throws {
            [
                "channels.lines", "users.lines", "messages/\(try key).lines", "channels.continuity",
                "messages/\(try key).continuity", "outbox.lines", "usage.lines", "records", "preloaded",
            ]
        }
    }

    /// Changes one byte of `path` so that it is no longer valid: in a data
    /// file its sidecar no longer matches; in `records` and `preloaded`
    /// (which have none) the first byte stops being a role or a hex digit.
    func flipByte(of path: String) throws {
        let file = root.appendingPathComponent(path)
        var bytes = try Data(contentsOf: file)
        bytes[0] ^= 0x40
        try bytes.write(to: file)
    }

    @Test func verifyChecksEveryFileTheFormatDefines() async throws {
        try await writeEveryFile()
        let files = try Cache(directory: root, configuration: Configuration(readOnly: true)).blocking.verify()
        #expect(files.map(\.path) == (try everyFile))
        #expect(files.allSatisfy { $0.isValid })
        for path in try everyFile {
            let copy = folder.appending("copy-\(path.replacingOccurrences(of: "/", with: "-"))")
            try FileManager.default.copyItem(at: root, to: copy)
            defer { try? FileManager.default.removeItem(at: copy) }
            let file = copy.appendingPathComponent(path)
            var bytes = try Data(contentsOf: file)
            bytes[0] ^= 0x40
            try bytes.write(to: file)
            // The cache's own types, or (when `records` no longer names them) without decoding.
            let bad: [VerifiedFile]
            if path == "records" {
                #expect(throws: FlatCacheError.self) { try Cache(directory: copy, configuration: Configuration(readOnly: true)) }
                bad = try CacheFolderSummary.verify(directory: copy).filter { !$0.isValid }
            } else {
                bad = try Cache(directory: copy, configuration: Configuration(readOnly: true)).blocking.verify().filter { !$0.isValid }
            }
            #expect(bad.map(\.path) == [path], "a flipped byte in \(path)")
            // A folder of other record types: every file but the records is checked the same way.
            #expect(try CacheFolderSummary.verify(directory: copy).filter { !$0.isValid }.map(\.path) == [path])
        }
    }

    @Test func repairMovesABadContinuityUsageOrPreloadedFileAside() async throws {
        try await writeEveryFile()
        for path in ["messages/\(try key).continuity", "usage.lines", "preloaded"] { try flipByte(of: path) }
        let repaired = try Cache(directory: root).blocking.verify(repair: true).filter { !$0.isValid }
        #expect(repaired.count == 3)
        #expect(repaired.allSatisfy { $0.movedTo?.hasPrefix("quarantine/") == true })
        #expect(try Cache(directory: root).blocking.verify().allSatisfy { $0.isValid })
    }

    @Test func anUnfinishedAppendIsANoteAndRepairCutsItOff() async throws {
        try await writeEveryFile()
        let path = "messages/\(try key).lines"
        let file = root.appendingPathComponent(path)
        let whole = try Data(contentsOf: file)
        // Lines written past the sidecar by an append a crash cut short: any bytes, not checked.
        let unfinished = Data("QUJD\nnot base64 and no newline".utf8)
        let handle = try FileHandle(forWritingTo: file)
        try handle.seekToEnd()
        try handle.write(contentsOf: unfinished)
        try handle.close()
        let trailing = unfinished.count

        let checked = try #require(try Cache(directory: root, configuration: Configuration(readOnly: true)).blocking.verify().first { $0.path == path })
        #expect(checked.isValid)
        #expect(checked.records == 3)
        #expect(checked.unfinishedAppendBytes == trailing)
        #expect(try Data(contentsOf: file).count == whole.count + trailing)  // a check changes nothing
        let other = try #require(try CacheFolderSummary.verify(directory: root).first { $0.path == path })
        #expect(other.unfinishedAppendBytes == trailing)

        let repaired = try #require(try Cache(directory: root).blocking.verify(repair: true).first { $0.path == path })
        #expect(repaired.isValid && repaired.movedTo == nil)
        #expect(repaired.unfinishedAppendBytes == trailing)
        #expect(try Data(contentsOf: file) == whole)
        let after = try #require(try Cache(directory: root).blocking.verify().first { $0.path == path })
        #expect(after.unfinishedAppendBytes == nil)
    }

    @Test func progressCountsOnlyTheFilesThatExist() throws {
        let cache = try Cache(directory: root)
        try cache.messages.save(Fixtures.messages(2))
        try cache.channels.replace(with: [])
        // No users.lines, no continuity, no usage.lines, no preloaded: 3 files (channels, messages, records).
        var calls = [[Int]]()
        let files = try cache.verify { calls.append([$0, $1]) }
        #expect(files.count == 3)
        #expect(calls == [[1, 3], [2, 3], [3, 3]])
    }

    @Test func usageRecordsOutOfOrderAreBad() async throws {
        try await writeEveryFile()
        let cache = try Cache(directory: root)
        try await cache.messages.save(Fixtures.messages(1, in: "second"))
        try await cache.close()
        let usage = root.appendingPathComponent("usage.lines")
        let lines = try String(decoding: Data(contentsOf: usage), as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 2)
        let swapped = Data((lines.reversed().joined(separator: "\n") + "\n").utf8)
        try swapped.write(to: usage)
        try Data("\(SHA256Digest(of: swapped).hex)  usage.lines\n".utf8).write(to: root.appendingPathComponent("usage.lines.sha256"))
        let bad = try Cache(directory: root, configuration: Configuration(readOnly: true)).blocking.verify().filter { !$0.isValid }
        #expect(bad.map(\.path) == ["usage.lines"])
        #expect(bad.first?.problem?.contains("line 2") == true)
    }

    /// Writes `records` as usage.lines (Base64 lines and a matching sidecar).
    func writeUsage(_ records: [Data]) throws {
        let lines = Data(records.map { $0.base64EncodedString() + "\n" }.joined().utf8)
        try lines.write(to: root.appendingPathComponent("usage.lines"))
        try Data("\(SHA256Digest(of: lines).hex)  usage.lines\n".utf8).write(to: root.appendingPathComponent("usage.lines.sha256"))
    }

    /// A usage record: `version`, the key of `channel`, then `times` (8 bytes each, little-endian).
    func usageRecord(_ version: UInt8, _ channel: String, _ times: [Int64]) -> Data {
        var record = Data([version]) + Data(SHA256Digest(of: Data(channel.utf8)).bytes)
        for value in times { withUnsafeBytes(of: value.littleEndian) { record += Data($0) } }
        return record
    }

    @Test func usageRecordsOfVersionOneAndTwoPassAndOtherLengthsAreBad() async throws {
        try await writeEveryFile()
        // Keys in ascending order: a version 1 record (49 bytes), then a version 2 (73 bytes).
        let channels = ["one", "two"].sorted { SHA256Digest(of: Data($0.utf8)).hex < SHA256Digest(of: Data($1.utf8)).hex }
        let good = [usageRecord(1, channels[0], [1_000, 2_000]), usageRecord(2, channels[1], [1_000, 2_000, 7, 100, 3_000_000])]
        #expect(good.map(\.count) == [49, 73])
        try writeUsage(good)
        let verify = { try Cache(directory: root, configuration: Configuration(readOnly: true)).blocking.verify().filter { !$0.isValid } }
        #expect(try verify().isEmpty)
        // 50 bytes; a version 1 record of version 2's length; a version 2 record of version 1's.
        for bad in [
            usageRecord(1, channels[0], [1_000, 2_000]) + Data([0]), usageRecord(1, channels[0], [1_000, 2_000, 7, 100, 3]),
            usageRecord(2, channels[0], [1_000, 2_000]),
        ] {
            try writeUsage([bad])
            let found = try verify()
            #expect(found.map(\.path) == ["usage.lines"], "\(bad.count) bytes")
            #expect(found.first?.problem?.contains("line 1") == true)
        }
    }

    /// An outbox line whose message does not decode is damage to a cache of
    /// the built-in types; a folder of other types checks only its Base64 and
    /// sidecar. A repair moves it aside like any data file.
    @Test func anOutboxLineIsDecodedWithItsMessages() async throws {
        try await writeEveryFile()
        let file = root.appendingPathComponent("outbox.lines")
        var record = try #require(Data(base64Encoded: String(decoding: try Data(contentsOf: file).dropLast(), as: UTF8.self)))
        // The queued message's version byte: after the line's version, "r-1", "plans", queuedAt, state,
        // attempts, an empty reason and the message's length.
        let messageVersion = 1 + 4 + 6 + 8 + 1 + 8 + 1 + 1
        #expect(record[messageVersion] == 1)
        record[messageVersion] = 9
        let lines = Data((record.base64EncodedString() + "\n").utf8)
        try lines.write(to: file)
        try Data("\(SHA256Digest(of: lines).hex)  outbox.lines\n".utf8).write(to: root.appendingPathComponent("outbox.lines.sha256"))
        let bad = try Cache(directory: root, configuration: Configuration(readOnly: true)).blocking.verify().filter { !$0.isValid }
        #expect(bad.map(\.path) == ["outbox.lines"])
        #expect(try CacheFolderSummary.verify(directory: root).allSatisfy { $0.isValid })
        let repaired = try Cache(directory: root).blocking.verify(repair: true).filter { !$0.isValid }
        #expect(repaired.first?.movedTo?.hasPrefix("quarantine/") == true)
        #expect(try await Cache(directory: root).outbox.entries().isEmpty)
    }
}
