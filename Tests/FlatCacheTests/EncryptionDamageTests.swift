@testable import FlatCache
import Foundation
import Testing

/// In an encrypted folder a line moved into another file, a flipped bit or a
/// cut line never reads as records: a miss and a report, even when the
/// sidecar was rewritten to match the changed bytes (so that only the seal
/// can tell). And saving what a file already holds writes nothing.
@Suite(.timeLimit(.minutes(2))) struct EncryptionDamageTests {
    typealias Cache = ChatCache<ChatMessage, ChatChannel, ChatUser>

    let folder: TemporaryFolder
    let damage = DamageRecorder()
    let cache: Cache
    static let alpha = "channel-alpha"
    static let beta = "channel-beta"

    init() throws {
        folder = try TemporaryFolder()
        cache = try Cache(directory: folder.url, configuration: Self.configuration(damage))
        try cache.messages.saveNow(Fixtures.messages(3, in: Self.alpha) + Fixtures.messages(3, in: Self.beta))
    }

    static func configuration(_ damage: DamageRecorder) -> Configuration {
        var configuration = damage.configuration()
        configuration.encryption = .aes256gcm(key: EncryptionTests.key)
        configuration.memoryLimit = 0  // every load reads the file
        return configuration
    }

    func file(of channelURL: String) throws -> URL {
        folder.appending("messages/" + (try cache.layout.messagesFile(forChannel: channelURL)).name)
    }

    /// Writes `body` into the channel's file with a sidecar that names it, as a forger with no key could.
    func forge(_ body: Data, in channelURL: String) throws {
        let url = try file(of: channelURL)
        try body.write(to: url)
        try Data("\(SHA256Digest(of: body).hex)  \(url.lastPathComponent)\n".utf8).write(to: url.appendingPathExtension("sha256"))
    }

    func lines(of channelURL: String) throws -> [Data] {
        try Data(contentsOf: try file(of: channelURL)).split(separator: UInt8(ascii: "\n")).map { Data($0) }
    }

    /// Loads `channelURL`: a miss, and one report saying a line did not open.
    func expectMissAndReport(_ channelURL: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(try cache.messages.loadNow(in: channelURL) == [], sourceLocation: sourceLocation)
        let reports = damage.files.map(\.problem)
        #expect(reports.count == 1, sourceLocation: sourceLocation)
        #expect(reports.first?.contains("does not open with the cache's key") == true, "\(reports)", sourceLocation: sourceLocation)
        // The other channel reads as it was
        #expect(try cache.messages.loadNow(in: Self.alpha) == Fixtures.messages(3, in: Self.alpha), sourceLocation: sourceLocation)
    }

    @Test func aLineMovedIntoAnotherChannelsFileDoesNotOpenThere() throws {
        let moved = try lines(of: Self.alpha)[2]
        try forge(Data((try lines(of: Self.beta) + [moved]).map { $0 + [UInt8(ascii: "\n")] }.joined()), in: Self.beta)
        try expectMissAndReport(Self.beta)
    }

    @Test func aLineMovedIntoAnotherFileKindDoesNotOpenThere() throws {
        try cache.users.saveNow([Fixtures.mina])
        let moved = try lines(of: Self.alpha)[0]
        let users = folder.appending("users.lines")
        let body = try Data(contentsOf: users) + moved + [UInt8(ascii: "\n")]
        try body.write(to: users)
        try Data("\(SHA256Digest(of: body).hex)  users.lines\n".utf8).write(to: folder.appending("users.lines.sha256"))
        #expect(try cache.users.loadNow() == [])
        #expect(damage.files.map(\.path) == ["users.lines"])
    }

    @Test func aFlippedBitIsAMissNotARecord() throws {
        var body = try Data(contentsOf: try file(of: Self.beta))
        // A bit of the second line's ciphertext, Base64 kept valid: 'A' <-> 'B' flips one bit of a sextet.
        let second = try #require(body.firstIndex(of: UInt8(ascii: "\n"))) + 1
        let index = second + 20
        body[index] = body[index] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        try forge(body, in: Self.beta)
        try expectMissAndReport(Self.beta)
    }

    @Test func aCutLineIsAMissNotARecord() throws {
        var lines = try lines(of: Self.beta)
        lines[1] = lines[1].prefix(lines[1].count - 8)  // 6 bytes of tag gone, Base64 still whole
        try forge(Data(lines.map { $0 + [UInt8(ascii: "\n")] }.joined()), in: Self.beta)
        try expectMissAndReport(Self.beta)
    }

    @Test func aLineOfAnotherKeyDoesNotOpen() throws {
        var other = Self.configuration(DamageRecorder())
        other.encryption = .aes256gcm(key: EncryptionTests.otherKey)
        let elsewhere = try TemporaryFolder()
        let stranger = try Cache(directory: elsewhere.url, configuration: other)
        try stranger.messages.saveNow(Fixtures.messages(1, in: Self.beta))
        let name = try stranger.layout.messagesFile(forChannel: Self.beta).name
        let foreign = try Data(contentsOf: elsewhere.appending("messages/" + name))
        try forge(foreign, in: Self.beta)
        try expectMissAndReport(Self.beta)
    }

    @Test func aPageReadFromDiskRefusesALineThatDoesNotOpen() throws {
        var body = try Data(contentsOf: try file(of: Self.beta))
        let last = body.count - 10
        body[last] = body[last] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        try forge(body, in: Self.beta)
        // The newest page reads only the last lines: the changed one must not come back as a record.
        let page = try cache.messages.blocking.loadLatest(in: Self.beta, limit: 1)
        #expect(page == [])
    }

    // MARK: - Skipping unchanged rewrites

    @Test func savingWhatTheFileHoldsWritesNothing() throws {
        let url = try file(of: Self.alpha)
        let before = try Data(contentsOf: url)
        let stamp = try #require(try FileSystem.stamp(at: url.path))

        let result = try cache.messages.replaceNow(Fixtures.messages(3, in: Self.alpha), in: Self.alpha)

        #expect(result.filesUnchanged == 1 && result.filesWritten == 0, "\(result)")
        #expect(try Data(contentsOf: url) == before)
        #expect(try FileSystem.stamp(at: url.path)?.inode == stamp.inode)
    }

    @Test func savingOneChangedRecordRewritesTheFile() throws {
        var changed = Fixtures.messages(3, in: Self.alpha)
        changed[1].text = "edited"
        let result = try cache.messages.replaceNow(changed, in: Self.alpha)
        #expect(result.filesWritten == 1, "\(result)")
        #expect(try cache.messages.loadNow(in: Self.alpha) == changed)
    }

    @Test func aFileChangedWithItsSidecarForgedIsRewrittenByTheSameSave() throws {
        // This process sealed the file, so its digest would prove it; changed bytes must not pass.
        var body = try Data(contentsOf: try file(of: Self.alpha))
        body[7] = body[7] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        try forge(body, in: Self.alpha)

        let result = try cache.messages.replaceNow(Fixtures.messages(3, in: Self.alpha), in: Self.alpha)

        #expect(result.filesWritten == 1, "\(result)")
        #expect(try cache.messages.loadNow(in: Self.alpha) == Fixtures.messages(3, in: Self.alpha))
    }

    @Test func theSameRecordsUnderAnotherKeyAreSealedAgain() throws {
        let users = folder.appending("users.lines")
        try cache.users.saveNow([Fixtures.mina])
        let before = try Data(contentsOf: users)
        // Another key's layout over the same path: equal records, but not sealed by it.
        let other = cache.layout.sealed(by: try Sealer(.aes256gcm(key: EncryptionTests.otherKey)))
        let outcome = try other.usersFile.write([try Fixtures.mina.serialize()], synchronized: false)
        #expect(outcome == .written)
        #expect(try Data(contentsOf: users) != before)
    }

    @Test func aFileDamagedInPlaceIsRewrittenByTheSameSave() throws {
        let url = try file(of: Self.alpha)
        var body = try Data(contentsOf: url)
        body[5] = body[5] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        try body.write(to: url)  // the sidecar now names other bytes

        let result = try cache.messages.replaceNow(Fixtures.messages(3, in: Self.alpha), in: Self.alpha)

        #expect(result.filesWritten == 1, "\(result)")
        #expect(try cache.messages.loadNow(in: Self.alpha) == Fixtures.messages(3, in: Self.alpha))
    }
}
