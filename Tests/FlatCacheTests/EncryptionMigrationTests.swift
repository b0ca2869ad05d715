@testable import FlatCache
import Foundation
import Testing

/// `migrate(encryption:)` and `rotateKey(to:)` move a folder between plain
/// and encrypted and from key to key, carrying every file kind over, and an
/// open finishes a change that a crash cut short (issue 25, point 4).
@Suite(.timeLimit(.minutes(2))) struct EncryptionMigrationTests {
    typealias Cache = ChatCache<ChatMessage, ChatChannel, ChatUser>

    let folder: TemporaryFolder
    static let key = EncryptionTests.key
    static let otherKey = EncryptionTests.otherKey

    init() throws {
        folder = try TemporaryFolder()
    }

    func open(_ key: Data?) throws(FlatCacheError) -> Cache {
        try Cache(directory: folder.url, configuration: EncryptionTests.configuration(key))
    }

    /// What a test fills in and expects back.
    struct Contents: Equatable {
        var alpha: [ChatMessage]
        var beta: [ChatMessage]
        var empty: [ChatMessage]?
        var channels: [ChatChannel]
        var users: [ChatUser]
        var token: String?
        var outbox: [String]

        static let expected = Contents(
            alpha: Fixtures.messages(4, in: "alpha"), beta: Fixtures.messages(2, in: "beta"), empty: [],
            channels: [Fixtures.channel("alpha", lastMessageAt: 4_000), Fixtures.channel("quiet", lastMessageAt: 0)],
            users: [Fixtures.mina], token: "token-1", outbox: ["queued"])
    }

    func fill(_ cache: Cache) async throws {
        try cache.messages.saveNow(Contents.expected.alpha + Contents.expected.beta)
        try cache.messages.replaceNow([], in: "quiet")  // cached with no messages; the list names it
        try cache.channels.blocking.replace(with: Contents.expected.channels)
        try cache.users.saveNow(Contents.expected.users)
        try await cache.messages.setChangeLogToken("token-1", in: "alpha")
        _ = try await cache.outbox.send(Fixtures.message(0, at: 9_000, in: "beta", text: "queued"), requestID: "r1")
    }

    func contents(_ cache: Cache) async throws -> Contents {
        Contents(
            alpha: try cache.messages.loadNow(in: "alpha"), beta: try cache.messages.loadNow(in: "beta"),
            empty: try cache.messages.loadIfCachedNow(in: "quiet"),
            channels: try cache.channels.blocking.load(), users: try cache.users.loadNow(),
            token: try await cache.messages.continuity(in: "alpha").changeLogToken,
            outbox: try await cache.outbox.entries().compactMap(\.message.text))
    }

    func messageFileNames() throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: folder.appending("messages").path))
    }

    func expectClean(_ cache: Cache, sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(try cache.blocking.verify().filter { !$0.isValid } == [], sourceLocation: sourceLocation)
        #expect(!FileManager.default.fileExists(atPath: folder.appending("rekey").path), sourceLocation: sourceLocation)
    }

    @Test func aPlainFolderIsEncryptedAndDecryptedBack() async throws {
        let plain = try open(nil)
        try await fill(plain)
        let plainNames = try messageFileNames()

        let encrypted = try await plain.migrate(encryption: .aes256gcm(key: Self.key))

        #expect(try await contents(encrypted) == Contents.expected)
        try expectClean(encrypted)
        #expect(try messageFileNames().isDisjoint(with: plainNames))
        #expect(try await contents(try open(Self.key)) == Contents.expected)
        #expect(throws: FlatCacheError.self) { try open(nil) }

        let decrypted = try await encrypted.migrate(encryption: nil)

        #expect(try await contents(decrypted) == Contents.expected)
        try expectClean(decrypted)
        #expect(try messageFileNames() == plainNames)
        #expect(try String(contentsOf: folder.appending("records"), encoding: .utf8).contains("encryption") == false)
        #expect(throws: FlatCacheError.self) { try open(Self.key) }
    }

    @Test func rotatingTheKeyReencryptsEveryFileAndRenamesTheMessageFiles() async throws {
        let cache = try open(Self.key)
        try await fill(cache)
        let before = try messageFileNames()
        let oldBytes = try folderBytes()

        let rotated = try await cache.rotateKey(to: Self.otherKey)

        #expect(try await contents(rotated) == Contents.expected)
        try expectClean(rotated)
        #expect(try messageFileNames().isDisjoint(with: before))
        // No line of the old key is left anywhere
        let newBytes = try folderBytes()
        for (path, bytes) in newBytes where path.hasSuffix(".lines") || path.hasSuffix(".continuity") {
            for line in bytes.split(separator: UInt8(ascii: "\n")) {
                #expect(!oldBytes.values.contains { $0.range(of: Data(line)) != nil }, "\(path) keeps a line of the old key")
            }
        }
        do {
            _ = try open(Self.key)
            Issue.record("the old key still opens the folder")
        } catch {
            guard case .wrongEncryptionKey = error else { throw error }
        }
    }

    @Test func theBlockingTwinRotatesToo() async throws {
        let cache = try open(Self.key)
        try await fill(cache)
        let rotated = try cache.blocking.rotateKey(to: Self.otherKey)
        #expect(try await contents(rotated) == Contents.expected)
        #expect(rotated.configuration.encryption == .aes256gcm(key: Self.otherKey))
    }

    @Test func writesWaitingInMemoryAreCarriedOver() async throws {
        var configuration = EncryptionTests.configuration(Self.key)
        configuration.writeDelay = .seconds(60)
        let cache = try Cache(directory: folder.url, configuration: configuration)
        _ = try await cache.messages.save(Fixtures.messages(3))  // waits in memory

        let rotated = try await cache.rotateKey(to: Self.otherKey)

        #expect(try rotated.messages.loadNow(in: Fixtures.channelURL) == Fixtures.messages(3))
    }

    @Test func aKeyOfTheWrongLengthIsRefusedBeforeAnythingChanges() async throws {
        let cache = try open(Self.key)
        try await fill(cache)
        let before = try folderBytes()
        await #expect(throws: FlatCacheError.self) { _ = try await cache.rotateKey(to: Data(count: 31)) }
        #expect(try folderBytes() == before)
    }

    @Test func aFileThatCannotBeNamedOrIsDamagedIsReportedAndLeftBehind() async throws {
        let damage = DamageRecorder()
        var configuration = damage.configuration()
        configuration.encryption = .aes256gcm(key: Self.key)
        let cache = try Cache(directory: folder.url, configuration: configuration)
        try cache.messages.replaceNow([], in: "unnamed")  // cached as empty, and the list does not name it
        try cache.messages.saveNow(Fixtures.messages(2, in: "alpha"))
        try cache.users.saveNow([Fixtures.mina])
        let unnamed = "messages/" + (try cache.layout.messagesFile(forChannel: "unnamed")).name
        let users = folder.appending("users.lines")
        var bytes = try Data(contentsOf: users)
        bytes[3] ^= 0x01  // the sidecar now names other bytes
        try bytes.write(to: users)

        let rotated = try await cache.rotateKey(to: Self.otherKey)

        #expect(damage.files.map(\.path).sorted() == [unnamed, "users.lines"])
        #expect(try rotated.messages.loadIfCachedNow(in: "unnamed") == nil)
        #expect(try rotated.users.loadNow() == [])
        #expect(try rotated.messages.loadNow(in: "alpha") == Fixtures.messages(2, in: "alpha"))
        try expectClean(rotated)
    }

    // MARK: - A change cut short

    /// Starts a change from `from` to `to` and stops it after `files` message
    /// files, as a crash would: the `rekey` file says where it was going.
    func cutShort(from: Data?, to: Data?, afterMessageFiles files: Int) throws {
        let source = try open(from)
        let sourceLayout = source.layout
        let target = sourceLayout.sealed(by: try to.map { (key) throws(FlatCacheError) in try Sealer(.aes256gcm(key: key)) })
        var state = KeyChange.State(from: sourceLayout.sealer?.keyID, to: target.sealer?.keyID)
        if let old = sourceLayout.sealer, let new = target.sealer {
            state.fromKey = seal(old.key, under: new)
            state.toKey = seal(new.key, under: old)
        }
        try KeyChange.contents(state).write(to: folder.appending("rekey"))
        // Convert some message files by hand, as the change does: new file first, then the old one goes.
        var converted = 0
        for name in try messageFileNames().sorted() where name.hasSuffix(".lines") && converted < files {
            let old = sourceLayout.messagesFile(named: name)
            guard case .records(let found) = try old.read(), let first = found.records.first else { continue }
            let lines = found.records
            let url = try ChatMessage(serializedData: first).channelURL
            let new = try target.messagesFile(forChannel: url)
            _ = try new.write(lines, synchronized: false)
            if case .records(let continuity) = try sourceLayout.continuityFile(of: old).read() {
                _ = try target.continuityFile(of: new).write(continuity.records, synchronized: false)
            }
            try old.remove()
            converted += 1
        }
        #expect(converted == files)
    }

    func seal(_ key: [UInt8], under sealer: Sealer) -> Data {
        let (bytes, ranges) = sealer.seal([Data(key)], fileName: KeyChange.fileName)
        return bytes[ranges[0]]
    }

    @Test func anOpenWithTheNewKeyFinishesARotationCutShort() async throws {
        try await fill(try open(Self.key))
        try cutShort(from: Self.key, to: Self.otherKey, afterMessageFiles: 1)

        let cache = try open(Self.otherKey)

        #expect(try await contents(cache) == Contents.expected)
        try expectClean(cache)
        #expect(throws: FlatCacheError.self) { try open(Self.key) }
    }

    @Test func anOpenWithTheOldKeyTakesARotationCutShortBack() async throws {
        try await fill(try open(Self.key))
        let before = try messageFileNames()
        try cutShort(from: Self.key, to: Self.otherKey, afterMessageFiles: 1)

        let cache = try open(Self.key)

        #expect(try await contents(cache) == Contents.expected)
        try expectClean(cache)
        #expect(try messageFileNames() == before)
    }

    @Test func anEncryptionCutShortNeedsTheNewKeyAndFinishesWithIt() async throws {
        try await fill(try open(nil))
        try cutShort(from: nil, to: Self.key, afterMessageFiles: 1)
        let before = try folderBytes()

        do {
            _ = try open(nil)
            Issue.record("a plain open went on without the key the files need")
        } catch {
            guard case .encryptionKeyRequired = error else { throw error }
        }
        #expect(try folderBytes() == before)
        do {
            _ = try open(Self.otherKey)
            Issue.record("a key that is neither side's opened the folder")
        } catch {
            guard case .wrongEncryptionKey = error else { throw error }
        }

        let cache = try open(Self.key)
        #expect(try await contents(cache) == Contents.expected)
        try expectClean(cache)
    }

    @Test func aDamagedRekeyFileIsRefused() async throws {
        try await fill(try open(Self.key))
        try Data("from nonsense\n".utf8).write(to: folder.appending("rekey"))
        do {
            _ = try open(Self.key)
            Issue.record("a damaged rekey file was taken")
        } catch {
            guard case .unreadableKeyChange = error else { throw error }
        }
    }

    /// Every file's relative path and bytes.
    func folderBytes() throws -> [String: Data] {
        var files = [String: Data]()
        for relative in try FileManager.default.subpathsOfDirectory(atPath: folder.url.path) {
            let url = folder.appending(relative)
            var isFolder: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder)
            if !isFolder.boolValue { files[relative] = try Data(contentsOf: url) }
        }
        return files
    }
}
