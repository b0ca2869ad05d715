import FlatCache
import Foundation
import Testing

/// A save that reports "unchanged" has proven that the bytes on disk are the
/// new bytes, so a save of the same data heals a file damaged in place; and
/// something that is not a file, standing where one belongs, is moved aside
/// rather than failing every write.
@Suite struct HealingTests {
    let folder: TemporaryFolder
    let recorder = DamageRecorder()
    let cache: ChatCache<ChatMessage, ChatChannel, ChatUser>
    let url = Fixtures.channelURL

    init() throws {
        folder = try TemporaryFolder()
        cache = try ChatCache(directory: folder.url, configuration: recorder.configuration())
    }

    /// The one message file in the cache.
    func messageFile() throws -> URL {
        let messages = folder.appending("messages")
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: messages.path).first { $0.hasSuffix(".lines") })
        return messages.appendingPathComponent(name)
    }

    /// Flips one bit of `file` in place: same size, sidecar untouched.
    func flipABit(in file: URL, at offset: Int = 10) throws {
        let handle = try FileHandle(forUpdating: file)
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(offset))
        let byte = try #require(try handle.read(upToCount: 1)).first ?? 0
        try handle.seek(toOffset: UInt64(offset))
        try handle.write(contentsOf: [byte ^ 0x01])
    }

    // MARK: - "Unchanged" is proven from the bytes on disk

    @Test func replacingTheSameMessagesHealsAFileDamagedInPlace() throws {
        // Given a channel whose file had one bit flipped on disk, at the same size
        let messages = Fixtures.messages(5)
        try cache.messages.blocking.replace(messages, in: url)
        try flipABit(in: try messageFile())

        // When the app saves the very same messages again
        let result = try cache.messages.blocking.replace(messages, in: url)

        // Then the file was rewritten, not reported unchanged, and reads back whole
        #expect(result.filesWritten == 1 && result.filesUnchanged == 0)
        #expect(try cache.messages.blocking.load(in: url) == messages)
        #expect(recorder.files.isEmpty)
        // and saving once more is a true "unchanged"
        #expect(try cache.messages.blocking.replace(messages, in: url).filesUnchanged == 1)
    }

    @Test func replacingTheSameChannelListHealsChannelsLines() throws {
        let channels = [Fixtures.channel("a", lastMessageAt: 2), Fixtures.channel("b", lastMessageAt: 1)]
        try cache.channels.blocking.replace(with: channels)
        try flipABit(in: folder.appending("channels.lines"), at: 3)

        let result = try cache.channels.blocking.replace(with: channels)

        #expect(result.filesWritten == 1)
        #expect(try cache.channels.blocking.load() == channels)
    }

    @Test func aDamagedSidecarIsRewrittenToo() throws {
        let messages = Fixtures.messages(3)
        try cache.messages.blocking.replace(messages, in: url)
        try flipABit(in: try messageFile().appendingPathExtension("sha256"), at: 0)

        #expect(try cache.messages.blocking.replace(messages, in: url).filesWritten == 1)
        #expect(try cache.messages.blocking.load(in: url) == messages)
    }

    @Test func anUpsertIntoADamagedFileReportsItAndHeals() throws {
        try cache.messages.blocking.replace(Fixtures.messages(3), in: url)
        try flipABit(in: try messageFile())

        let result = try cache.messages.blocking.save([Fixtures.message(9, at: 9_000)])

        #expect(result.filesWritten == 1)
        #expect(try cache.messages.blocking.load(in: url) == [Fixtures.message(9, at: 9_000)])
        #expect(recorder.files.count == 1)
        #expect(recorder.files.first?.movedTo?.hasPrefix("quarantine/") == true)
    }

    // MARK: - Something else where a file belongs

    @Test(arguments: ["data", "sidecar", "temporary data", "temporary sidecar"])
    func aFolderWhereAFileBelongsIsMovedAsideAndTheSaveHeals(_ place: String) throws {
        // Given a channel file, then a folder (with a file in it) planted where one of its files goes
        let messages = Fixtures.messages(4)
        try cache.messages.blocking.replace(Fixtures.messages(2), in: url)
        let data = try messageFile()
        let target: URL = switch place {
        case "data": data
        case "sidecar": data.appendingPathExtension("sha256")
        case "temporary data": data.deletingLastPathComponent().appendingPathComponent("." + data.lastPathComponent + ".tmp")
        default: data.deletingLastPathComponent().appendingPathComponent("." + data.lastPathComponent + ".sha256.tmp")
        }
        try? FileManager.default.removeItem(at: target)
        try FileManager.default.createDirectory(at: target, withIntermediateDirectories: false)
        try Data("x".utf8).write(to: target.appendingPathComponent("inside"))

        // When the app replaces the channel, twice
        let first = try cache.messages.blocking.replace(messages, in: url)
        let second = try cache.messages.blocking.replace(messages, in: url)

        // Then the first write moved the folder aside and wrote, the second found it unchanged
        #expect(first.filesWritten == 1)
        #expect(second.filesUnchanged == 1)
        #expect(try cache.messages.blocking.load(in: url) == messages)
        var isDirectory: ObjCBool = false
        #expect(!(FileManager.default.fileExists(atPath: target.path, isDirectory: &isDirectory) && isDirectory.boolValue))
        #expect(recorder.files.count == 1)
        #expect(recorder.files.first?.problem == "it or its sidecar is not a regular file")
        let incident = try #require(recorder.files.first?.movedTo)
        #expect(FileManager.default.fileExists(atPath: folder.appending(incident + "/" + target.lastPathComponent + "/inside").path))
    }

    @Test func aFolderWhereChannelsLinesBelongsIsMovedAsideByReplace() throws {
        try FileManager.default.createDirectory(at: folder.appending("channels.lines"), withIntermediateDirectories: false)
        let channels = [Fixtures.channel("a", lastMessageAt: 2)]

        #expect(try cache.channels.blocking.replace(with: channels).filesWritten == 1)
        #expect(try cache.channels.blocking.load() == channels)
    }
}

/// Removing, and changes that only take away, with odd things on disk.
@Suite struct RemovalTests {
    let folder: TemporaryFolder
    let cache: ChatCache<ChatMessage, ChatChannel, ChatUser>

    init() throws {
        folder = try TemporaryFolder()
        cache = try ChatCache(directory: folder.url)
    }

    @Test func logOutRemovesAFolderPlantedWhereADataFileBelongs() throws {
        try cache.messages.blocking.save(Fixtures.messages(2))
        try FileManager.default.createDirectory(at: folder.appending("users.lines/inside"), withIntermediateDirectories: true)

        try cache.blocking.removeAll()

        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).sorted() == ["format", "records"])
    }

    @Test func removingAChannelRemovesAFolderPlantedAsItsFile() throws {
        try cache.messages.blocking.save(Fixtures.messages(2))
        let messages = folder.appending("messages")
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: messages.path).first { $0.hasSuffix(".lines") })
        try FileManager.default.removeItem(at: messages.appendingPathComponent(name))
        try FileManager.default.createDirectory(at: messages.appendingPathComponent(name + "/inside"), withIntermediateDirectories: true)

        try cache.messages.blocking.removeAll(in: Fixtures.channelURL)

        #expect(try FileManager.default.contentsOfDirectory(atPath: messages.path).isEmpty)
        #expect(try cache.messages.blocking.loadIfCached(in: Fixtures.channelURL) == nil)
    }

    @Test func changesThatOnlyTakeAwayLeaveNeverCachedAsItIs() throws {
        let result = try cache.messages.blocking.applyChangeLog(updated: [], deletedMessageIDs: [5], in: "never")
        try cache.channels.blocking.remove(channelURL: "never")
        try cache.users.blocking.remove(userIDs: ["nobody"])

        #expect(result.filesWritten == 0 && result.filesUnchanged == 0)
        #expect(try cache.messages.blocking.loadIfCached(in: "never") == nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).sorted() == ["format", "records"])

        // while deleting the last cached message leaves the channel cached as empty
        try cache.messages.blocking.save([Fixtures.message(5, at: 5)])
        try cache.messages.blocking.applyChangeLog(updated: [], deletedMessageIDs: [5], in: Fixtures.channelURL)
        #expect(try cache.messages.blocking.loadIfCached(in: Fixtures.channelURL) == [])
    }

    @Test func verifyWithoutRepairLeavesACrashCutReplaceAsItIs() throws {
        // Given new data beside its old sidecar, the new sidecar waiting in its temporary file
        let sidecar = folder.appending("users.lines.sha256")
        try cache.users.blocking.save([Fixtures.mina])
        let old = try Data(contentsOf: sidecar)
        try cache.users.blocking.save([ChatUser(userID: "zoe", nickname: "Zoe")])
        try Data(contentsOf: sidecar).write(to: folder.appending(".users.lines.sha256.tmp"))
        try old.write(to: sidecar)

        // When it is verified without repair, the data is whole and nothing is renamed
        #expect(try cache.blocking.verify().allSatisfy(\.isValid))
        #expect(FileManager.default.fileExists(atPath: folder.appending(".users.lines.sha256.tmp").path))
        #expect(try Data(contentsOf: sidecar) == old)
    }
}
