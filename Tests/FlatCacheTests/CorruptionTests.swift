@testable import FlatCache
import Foundation
import Testing

/// A damaged file is never returned as data and never crashes: it reads as a
/// cache miss, is moved into `quarantine/` (not deleted), is logged, and the
/// next save heals the channel.
@Suite struct CorruptionTests {
    let folder: TemporaryFolder
    let recorder = LogRecorder()
    let cache: ChatCache<ChatMessage, ChatChannel, ChatUser>
    let url = Fixtures.channelURL

    init() throws {
        folder = try TemporaryFolder()
        cache = try ChatCache(directory: folder.url, configuration: Configuration(logger: recorder.logger))
        try cache.messages.save(Fixtures.messages(3))
    }

    var messagesFolder: URL { folder.appending("messages") }

    func messagesFile() throws -> URL {
        let names = try FileManager.default.contentsOfDirectory(atPath: messagesFolder.path)
        return messagesFolder.appendingPathComponent(try #require(names.first { $0.hasSuffix(".lines") }))
    }

    func sidecar(of file: URL) -> URL {
        file.appendingPathExtension("sha256")
    }

    /// Writes `body` as the channel's data file with a sidecar that matches it,
    /// so only the check under test can catch the damage.
    func replaceBodyKeepingTheSidecarValid(_ body: String) throws {
        let file = try messagesFile()
        try Data(body.utf8).write(to: file)
        let digest = SHA256Digest(of: Data(body.utf8)).hex
        try Data("\(digest)  \(file.lastPathComponent)\n".utf8).write(to: sidecar(of: file))
    }

    /// Loads, and checks the damage was handled: a miss, quarantined, logged, healed.
    ///
    /// - Parameter fresh: Load through a new cache on the folder (same logger), which reads
    ///   the file from disk: damage to the sidecar alone leaves the data file's stamp as it
    ///   was, so the suite's cache, which holds the channel in memory, serves it from there.
    func expectMissQuarantineLogAndHeal(
        reason: String, fresh: Bool = false, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let damaged = try? messagesFile()
        let cache = fresh ? try ChatCache(directory: folder.url, configuration: Configuration(logger: recorder.logger)) : cache

        // When the channel is loaded
        let loaded = try cache.messages.load(in: url)

        // Then it is a miss, not garbage
        #expect(loaded == [], sourceLocation: sourceLocation)
        // and the damaged file was moved aside, not deleted
        let quarantine = folder.appending("quarantine")
        let incidents = try FileManager.default.contentsOfDirectory(atPath: quarantine.path)
        #expect(incidents.count == 1, sourceLocation: sourceLocation)
        if let damaged, let incident = incidents.first {
            let moved = quarantine.appendingPathComponent(incident).appendingPathComponent(damaged.lastPathComponent)
            #expect(FileManager.default.fileExists(atPath: moved.path), sourceLocation: sourceLocation)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: messagesFolder.path) == [], sourceLocation: sourceLocation)
        // and reported
        let warning = recorder.entries.first { $0.level == .warning }
        #expect(warning?.metadata["reason"]?.contains(reason) == true, "logged: \(recorder.entries)", sourceLocation: sourceLocation)
        // and the next save heals the channel
        try cache.messages.save(Fixtures.messages(2))
        #expect(try cache.messages.load(in: url) == Fixtures.messages(2), sourceLocation: sourceLocation)
    }

    @Test func aFlippedBitIsCaughtByTheSidecar() throws {
        let file = try messagesFile()
        var bytes = try Data(contentsOf: file)
        bytes[bytes.count / 2] ^= 0x04
        try bytes.write(to: file)
        try expectMissQuarantineLogAndHeal(reason: "the sidecar says")
    }

    @Test func aWrongSidecarIsCaught() throws {
        try Data("\(String(repeating: "0", count: 64))  \(try messagesFile().lastPathComponent)\n".utf8)
            .write(to: sidecar(of: try messagesFile()))
        try expectMissQuarantineLogAndHeal(reason: "the sidecar says", fresh: true)
    }

    @Test func aMissingSidecarIsCaught() throws {
        try FileManager.default.removeItem(at: sidecar(of: try messagesFile()))
        try expectMissQuarantineLogAndHeal(reason: "sidecar is missing", fresh: true)
    }

    @Test func aTruncatedFileIsCaught() throws {
        let file = try messagesFile()
        let bytes = try Data(contentsOf: file)
        try bytes.prefix(bytes.count - 7).write(to: file)
        try expectMissQuarantineLogAndHeal(reason: "the sidecar says")
    }

    @Test func aTruncatedLastLineIsCaughtEvenWithAMatchingSidecar() throws {
        let body = try String(contentsOf: try messagesFile(), encoding: .utf8)
        try replaceBodyKeepingTheSidecarValid(String(body.dropLast(5)))
        try expectMissQuarantineLogAndHeal(reason: "cut short")
    }

    @Test func aBadBase64LineIsCaughtEvenWithAMatchingSidecar() throws {
        try replaceBodyKeepingTheSidecarValid("eyJ9\n%%% not base64 %%%\n")
        try expectMissQuarantineLogAndHeal(reason: "line 2 is not valid Base64")
    }

    @Test func aRecordThatDoesNotDecodeIsCaughtEvenWithAMatchingSidecar() throws {
        let good = try Fixtures.message(1, at: 1_000).serialize().base64EncodedString()
        let notAMessage = Data([1, 2, 3]).base64EncodedString()  // version 1, then too few bytes
        try replaceBodyKeepingTheSidecarValid("\(good)\n\(notAMessage)\n")
        try expectMissQuarantineLogAndHeal(reason: "line 2 does not decode")
    }

    @Test func aFolderInPlaceOfTheDataFileIsCaught() throws {
        let file = try messagesFile()
        try FileManager.default.removeItem(at: file)
        try FileManager.default.createDirectory(at: file, withIntermediateDirectories: false)
        try expectMissQuarantineLogAndHeal(reason: "not a regular file")
    }

    @Test func aFolderInPlaceOfTheSidecarIsCaught() throws {
        let sidecar = sidecar(of: try messagesFile())
        try FileManager.default.removeItem(at: sidecar)
        try FileManager.default.createDirectory(at: sidecar, withIntermediateDirectories: false)
        try expectMissQuarantineLogAndHeal(reason: "not a regular file", fresh: true)
    }

    /// A channel in memory whose sidecar alone is damaged: the data file is
    /// as memory knows it, so a load returns the records it holds (exactly
    /// the file's); the next write of the channel checks both files, finds
    /// the damage, moves the file aside, logs it and writes what it saves.
    @Test func aDamagedSidecarOfAChannelInMemoryIsFoundByTheNextWrite() throws {
        try Data("\(String(repeating: "0", count: 64))  \(try messagesFile().lastPathComponent)\n".utf8)
            .write(to: sidecar(of: try messagesFile()))
        #expect(try cache.messages.load(in: url) == Fixtures.messages(3))
        #expect(!FileManager.default.fileExists(atPath: folder.appending("quarantine").path))

        let newer = ChatMessage(messageID: 99, channelURL: url, createdAt: 99_000, text: "newer")
        try cache.messages.save([newer])

        let incidents = try FileManager.default.contentsOfDirectory(atPath: folder.appending("quarantine").path)
        #expect(incidents.count == 1)
        let warning = recorder.entries.first { $0.level == .warning }
        #expect(warning?.metadata["reason"]?.contains("the sidecar says") == true, "logged: \(recorder.entries)")
        let fresh = try ChatCache(directory: folder.url)
        #expect(try fresh.messages.load(in: url) == [newer])
    }

    @Test func aFIFOInPlaceOfTheDataFileDoesNotBlockTheLoad() throws {
        let file = try messagesFile()
        try FileManager.default.removeItem(at: file)
        #expect(mkfifo(file.path, 0o644) == 0)
        try expectMissQuarantineLogAndHeal(reason: "not a regular file")
    }

    @Test func aCorruptChannelListIsAMissAndHeals() throws {
        try cache.channels.replace(with: [Fixtures.channel("a", lastMessageAt: 1)])
        try Data("\u{0}\u{1}garbage".utf8).write(to: folder.appending("channels.lines"))
        #expect(try cache.channels.load() == [])
        #expect(FileManager.default.fileExists(atPath: folder.appending("quarantine").path))
        try cache.channels.save([Fixtures.channel("b", lastMessageAt: 2)])
        #expect(try cache.channels.load().map(\.channelURL) == ["b"])
    }

    @Test func aSaveOverACorruptFileQuarantinesItAndWritesTheNewMessages() throws {
        let file = try messagesFile()
        try Data("junk\n".utf8).write(to: file)
        // A save merges with what is cached: the junk must not be merged, nor block the save.
        try cache.messages.save([Fixtures.message(10, at: 10_000)])
        #expect(try cache.messages.load(in: url).map(\.messageID) == [10])
        #expect(recorder.entries.count == 1)
    }
}
