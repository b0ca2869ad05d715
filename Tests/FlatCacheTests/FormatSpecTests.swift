@testable import FlatCache
import Foundation
import Testing

/// The statements of `docs/format.md` that an independent reader needs and
/// no golden shows by itself: each builds the case on disk and checks what
/// FlatCache's reader does with it. The golden `every-file` pins the files
/// added to version 1 after its first release.
@Suite struct FormatSpecTests {
    typealias Cache = ChatCache<ChatMessage, ChatChannel, ChatUser>
    let folder: TemporaryFolder

    init() throws {
        folder = try TemporaryFolder()
    }

    var root: URL { folder.appending("cache") }

    func write(_ text: String, to path: String) throws {
        try Data(text.utf8).write(to: root.appendingPathComponent(path))
    }

    /// A data file `path` holding `lines`, with its sidecar.
    func writeDataFile(_ path: String, _ bytes: Data) throws {
        try bytes.write(to: root.appendingPathComponent(path))
        let name = (path as NSString).lastPathComponent
        try write(SHA256Digest(of: bytes).hex + "  " + name + "\n", to: path + ".sha256")
    }

    func key(_ url: String) -> String { SHA256Digest(of: Data(url.utf8)).hex }

    // MARK: - records

    @Test func recordsRolesComeInOneOrderAndANameIsEverythingAfterTheFirstSpace() throws {
        let parsed = RecordTypesFile.parse(Data("messages My App.Message\nchannels  X\nusers U\n".utf8))
        #expect(parsed == RecordTypes(messages: "My App.Message", channels: " X", users: "U"))
        for reordered in ["channels A\nmessages B\nusers C\n", "messages A\nmessages B\nusers C\n", "messages A\nchannels B\nusers C\nusers D\n"] {
            #expect(RecordTypesFile.parse(Data(reordered.utf8)) == nil, "\(reordered)")
        }
        // A folder whose records file has the built-in names in another order is refused.
        _ = try Cache(directory: root)
        try write("channels FlatCache.ChatChannel\nmessages FlatCache.ChatMessage\nusers FlatCache.ChatUser\n", to: "records")
        #expect {
            try Cache(directory: root)
        } throws: { error in
            if case FlatCacheError.recordTypeMismatch = error { true } else { false }
        }
    }

    // MARK: - usage.lines

    @Test func usageReaderTakesTheLaterLineOfAKeyAndAnyOrder() throws {
        func record(_ key: String, saved: Int64, used: Int64) -> Data {
            var writer = BinaryWriter(capacity: 49)
            writer.write(UInt8(1))
            for byte in SHA256Digest(hex: Array(key.utf8))!.bytes { writer.write(byte) }
            writer.write(saved)
            writer.write(used)
            return writer.data
        }
        let (a, b) = (key("b-channel"), key("a-channel"))
        let lines = [record(a, saved: 5, used: 9), record(b, saved: Int64.min, used: 3), record(a, saved: 7, used: 8)]
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try writeDataFile("usage.lines", Data(lines.map { $0.base64EncodedString() + "\n" }.joined().utf8))
        let times = try ChannelUsage.read(RecordFile(path: root.appendingPathComponent("usage.lines").path), logger: .init(label: "test"))
        #expect(times[a + ".lines"] == ChannelUsage.Times(saved: 7, used: 8))
        #expect(times[b + ".lines"] == ChannelUsage.Times(saved: Int64.min, used: 3))
    }

    // MARK: - continuity

    @Test func aTokenFlagWithAnEmptyStringIsTheEmptyToken() throws {
        let cache = try Cache(directory: root)
        try cache.messages.save(Fixtures.messages(2))
        try cache.messages.setChangeLogToken("", in: Fixtures.channelURL)
        #expect(try cache.messages.continuity(in: Fixtures.channelURL).changeLogToken == "")
        let line = try Data(contentsOf: root.appendingPathComponent("messages/\(key(Fixtures.channelURL)).continuity"))
        let record = try #require(Data(base64Encoded: line.dropLast()))
        #expect(record[1] & 2 == 2)
        #expect(record[18] == 0)  // the token's length
    }

    @Test func aContinuityRecordHoldsExactly16BytesPerRange() throws {
        let record = ContinuityRecord(continuity: ChannelContinuity(completeRanges: [1...2, 5...9]), anchor: nil)
        let bytes = try record.serialize()
        #expect(bytes.count == 26 + 1 + 16 * 2)
        #expect(try ContinuityRecord(serializedData: bytes).continuity.completeRanges == [1...2, 5...9])
        #expect(throws: RecordDecodingError.self) { try ContinuityRecord(serializedData: bytes + Data([0])) }
        #expect(throws: RecordDecodingError.self) { try ContinuityRecord(serializedData: bytes.dropLast()) }
        var negative = bytes
        negative.replaceSubrange(19..<27, with: withUnsafeBytes(of: Int64(-1).littleEndian) { Data($0) })
        #expect(throws: RecordDecodingError.self) { try ContinuityRecord(serializedData: negative.prefix(27)) }
    }

    @Test func theAnchorIsComparedWithTheOldestOfTheReadersNewestN() throws {
        let writer = try Cache(directory: root)
        try writer.messages.replace(Fixtures.messages(5), in: Fixtures.channelURL, covering: ChannelContinuity.channelStart...9_000)
        // The anchor is message 1; a reader keeping 3 has message 3 (at 3000) as its oldest.
        let reader = try Cache(directory: root, configuration: Configuration(maxMessagesPerChannel: 3, readOnly: true))
        #expect(try reader.messages.continuity(in: Fixtures.channelURL).completeRanges == [3_001...9_000])
        #expect(try writer.messages.continuity(in: Fixtures.channelURL).completeRanges == [ChannelContinuity.channelStart...9_000])
    }

    @Test func aChannelWithNoMessagesKeepsItsRangesWhateverTheAnchor() {
        let stale = ContinuityRecord(
            continuity: ChannelContinuity(completeRanges: [10...20]), anchor: .init(createdAt: 5, id: 99))
        #expect(stale.validated(against: [ChatMessage]()).completeRanges == [10...20])
    }

    @Test func theAnchorsIdTextIsTheDecimalNumber() {
        for (id, text) in [(Int64(1), "1"), (-42, "-42"), (1_000_000, "1000000")] {
            let anchor = ContinuityRecord.Anchor(Fixtures.message(id, at: 0))
            let digest = SHA256Digest(of: Data(text.utf8)).bytes.prefix(8)
            #expect(withUnsafeBytes(of: anchor.id.littleEndian) { Array($0) } == Array(digest))
        }
    }

    @Test func aContinuityFileWithoutItsMessageFileReadsAsNothingKnown() throws {
        let cache = try Cache(directory: root)
        try cache.messages.replace(Fixtures.messages(2), in: Fixtures.channelURL, covering: 0...9_000)
        try cache.messages.setChangeLogToken("t", in: Fixtures.channelURL)
        let messages = root.appendingPathComponent("messages/\(key(Fixtures.channelURL)).lines")
        try FileManager.default.removeItem(at: messages)
        try FileManager.default.removeItem(at: messages.appendingPathExtension("sha256"))
        let reader = try Cache(directory: root)
        #expect(try reader.messages.continuity(in: Fixtures.channelURL) == ChannelContinuity())
        #expect(FileManager.default.fileExists(atPath: root.appendingPathComponent("messages/\(key(Fixtures.channelURL)).continuity").path))
        // A save that creates the message file again: the anchor (message 1) no longer matches.
        try reader.messages.save([Fixtures.message(5, at: 5_000)])
        #expect(try reader.messages.continuity(in: Fixtures.channelURL).completeRanges == [5_001...9_000])
    }

    // MARK: - reading

    @Test func anAppendToAnEmptyFileReadsAsEmptyWhateverFollows() throws {
        _ = try Cache(directory: root)
        try writeDataFile("users.lines", Data())
        try write("not base64, no newline", to: "users.lines")  // the sidecar still names 0 bytes
        let readOnly = try Cache(directory: root, configuration: Configuration(readOnly: true))
        #expect(try readOnly.users.load() == [])
        #expect(try Data(contentsOf: root.appendingPathComponent("users.lines")).count == 22)
        #expect(try Cache(directory: root).users.load() == [])
        #expect(try Data(contentsOf: root.appendingPathComponent("users.lines")).isEmpty)
    }

    @Test func aMissingSidecarWithACompleteWaitingOneIsFinished() throws {
        let cache = try Cache(directory: root)
        try cache.users.save([Fixtures.mina])
        let sidecar = root.appendingPathComponent("users.lines.sha256")
        try FileManager.default.moveItem(at: sidecar, to: root.appendingPathComponent(".users.lines.sha256.tmp"))
        #expect(try Cache(directory: root, configuration: Configuration(readOnly: true)).users.load() == [Fixtures.mina])
        #expect(!FileManager.default.fileExists(atPath: sidecar.path))
        #expect(try Cache(directory: root).users.load() == [Fixtures.mina])
        #expect(FileManager.default.fileExists(atPath: sidecar.path))
    }

    @Test func aReadLeavesAFolderAtATemporaryNameInPlace() throws {
        let cache = try Cache(directory: root)
        try cache.users.save([Fixtures.mina])
        for name in [".users.lines.tmp", ".users.lines.sha256.tmp"] {
            try FileManager.default.createDirectory(at: root.appendingPathComponent(name), withIntermediateDirectories: false)
        }
        #expect(try Cache(directory: root).users.load() == [Fixtures.mina])
        #expect(FileManager.default.fileExists(atPath: root.appendingPathComponent(".users.lines.tmp/").path))
        #expect(FileManager.default.fileExists(atPath: root.appendingPathComponent(".users.lines.sha256.tmp/").path))
        #expect(!FileManager.default.fileExists(atPath: root.appendingPathComponent("quarantine").path))
    }

    @Test func otherNamesAreIgnoredAndRootOnesSurviveRemoveAll() throws {
        let cache = try Cache(directory: root)
        try cache.messages.save(Fixtures.messages(2))
        try write("mine", to: "notes.txt")
        try write("mine", to: "messages/README")
        try write("mine", to: "messages/\(key(Fixtures.channelURL).uppercased()).lines")
        let reopened = try Cache(directory: root)
        #expect(try reopened.messages.load(in: Fixtures.channelURL).count == 2)
        #expect(try reopened.verify().map(\.path) == ["messages/\(key(Fixtures.channelURL)).lines", "records"])
        try reopened.removeAll()
        #expect(FileManager.default.fileExists(atPath: root.appendingPathComponent("notes.txt").path))
        #expect(!FileManager.default.fileExists(atPath: root.appendingPathComponent("messages").path))
    }

    // MARK: - the golden

    /// Every file of format 1 that FlatCache writes through its API, at fixed times.
    @Test func everyFileIsPinnedByAGolden() async throws {
        let clock = CacheClock { Date(timeIntervalSince1970: 1_700_000_000) }
        let cache = try Cache(directory: root, configuration: Configuration(clock: clock))
        try await cache.channels.replace(with: [Fixtures.channel("plans", lastMessageAt: 3_000)])
        try await cache.channels.setChangeLogToken("list-1")
        try await cache.messages.replace(Fixtures.messages(3, in: "plans"), in: "plans", covering: ChannelContinuity.channelStart...5_000)
        try await cache.messages.setChangeLogToken("changes-1", in: "plans")
        try await cache.users.save([Fixtures.mina])
        _ = try await cache.messages.load(in: "plans")
        try await cache.close()
        // usage.lines ends with the message file's inode, size and modification time, which
        // differ on every run: its first 49 bytes are pinned, its last 24 checked against a stat.
        let usageURL = root.appendingPathComponent("usage.lines")
        let usage = try Data(contentsOf: usageURL)
        let record = try #require(Data(base64Encoded: usage.dropLast()))
        let path = try CacheFolderSummary.messagesFilePath(forChannel: "plans")
        let stamp = try #require(try FileSystem.stamp(at: root.appendingPathComponent(path).path))
        var mark = Data()
        for value in [
            Int64(bitPattern: stamp.inode), Int64(stamp.size),
            Int64(stamp.modified.seconds) * 1_000_000_000 + Int64(stamp.modified.nanoseconds),
        ] {
            withUnsafeBytes(of: value.littleEndian) { mark += Data($0) }
        }
        #expect(record.count == 73 && record.suffix(24) == mark)
        let sidecar = try String(contentsOf: root.appendingPathComponent("usage.lines.sha256"), encoding: .utf8)
        #expect(sidecar == SHA256Digest(of: usage).hex + "  usage.lines\n")
        try FileManager.default.removeItem(at: usageURL)
        try FileManager.default.removeItem(at: root.appendingPathComponent("usage.lines.sha256"))
        try GoldenFolder.assertMatches(root, golden: "every-file")
        // docs/format.md shows usage.lines' first 49 bytes in hex and channels.continuity's line.
        let document = try String(contentsOf: URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/format.md"), encoding: .utf8)
        let pinned = record.prefix(49).map { String(format: "%02x", $0) }.joined()
        #expect(pinned.hasPrefix("02" + SHA256Digest(of: Data("plans".utf8)).hex))
        #expect(document.contains("\n```\n" + pinned + "\n```\n"), "usage.lines")
        for name in ["channels.continuity"] {
            let line = try String(decoding: Data(contentsOf: GoldenFolder.url("every-file").appendingPathComponent(name)), as: UTF8.self)
            #expect(document.contains("\n```\n" + line + "```\n"), "\(name)")
        }
    }
}
