@testable import FlatCache
import Foundation
import Testing

/// With ``Configuration/encryption`` every data file's lines are sealed and
/// message files named under the key: a copied folder shows no content and no
/// channel URL, a line moved or changed is a miss and a report, and the wrong
/// key is refused before anything is touched (issue 25).
@Suite(.timeLimit(.minutes(2))) struct EncryptionTests {
    typealias Cache = ChatCache<ChatMessage, ChatChannel, ChatUser>

    let folder: TemporaryFolder
    static let key = Data((0..<32).map { UInt8($0) })
    static let otherKey = Data((0..<32).map { UInt8(255 - $0) })

    init() throws {
        folder = try TemporaryFolder()
    }

    static func configuration(_ key: Data? = key, damage: DamageRecorder? = nil) -> Configuration {
        var configuration = damage?.configuration() ?? Configuration(logger: LogRecorder().logger)
        configuration.encryption = key.map { .aes256gcm(key: $0) }
        return configuration
    }

    func open(_ key: Data? = key, damage: DamageRecorder? = nil) throws(FlatCacheError) -> Cache {
        try Cache(directory: folder.url, configuration: Self.configuration(key, damage: damage))
    }

    // MARK: - What the folder shows

    /// Strings that must not appear in the folder, in its bytes or in its lines' Base64-decoded bytes.
    static let secrets = [
        "secret-url-alpha", "secret-url-beta", "Whispered text one", "Whispered text two", "Channel Named Saffron",
        "Nickname Zanzibar", "continuity-token-quartz", "list-token-onyx", "outbox text umber",
    ]

    /// Fills a cache with every file kind, each holding one of ``secrets``.
    func fillEveryFileKind(_ cache: Cache) async throws {
        let author = ChatUser(userID: "user-1", nickname: "Nickname Zanzibar")
        try cache.messages.saveNow([
            ChatMessage(messageID: 1, channelURL: "secret-url-alpha", createdAt: 1_000, sender: author, text: "Whispered text one"),
            ChatMessage(messageID: 2, channelURL: "secret-url-beta", createdAt: 2_000, sender: author, text: "Whispered text two"),
        ])
        try cache.channels.blocking.replace(with: [
            ChatChannel(channelURL: "secret-url-alpha", kind: .group, name: "Channel Named Saffron", memberCount: 2, createdAt: 0)
        ])
        try cache.users.saveNow([author])
        try await cache.messages.setChangeLogToken("continuity-token-quartz", in: "secret-url-alpha")
        try await cache.channels.setChangeLogToken("list-token-onyx")
        _ = try await cache.outbox.send(
            ChatMessage(messageID: 0, channelURL: "secret-url-beta", createdAt: 3_000, sender: author, text: "outbox text umber"),
            requestID: "request-1")
        try await cache.close()
    }

    /// Every secret found in the folder: in a file's name or bytes, or in the
    /// Base64-decoded bytes of any of its lines (how a plain folder holds them).
    func secretsFound() throws -> [String] {
        var found = Set<String>()
        let files = try FileManager.default.subpathsOfDirectory(atPath: folder.url.path)
        for relative in files {
            let path = folder.url.path + "/" + relative
            var isFolder: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: path, isDirectory: &isFolder)
            let hashedNames = Self.secrets.map { SHA256Digest(of: Data($0.utf8)).hex }
            for (secret, hashed) in zip(Self.secrets, hashedNames) where relative.contains(secret) || relative.contains(hashed) {
                found.insert(secret)
            }
            guard !isFolder.boolValue else { continue }
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            var views = [bytes]
            for line in bytes.split(separator: UInt8(ascii: "\n")) {
                if let decoded = Data(base64Encoded: Data(line)) { views.append(decoded) }
            }
            for secret in Self.secrets where views.contains(where: { $0.range(of: Data(secret.utf8)) != nil }) {
                found.insert(secret)
            }
        }
        return found.sorted()
    }

    @Test func everyFileKindRoundTripsAndTheFolderShowsNoneOfItsText() async throws {
        try await fillEveryFileKind(try open())

        // Nothing of the content, nor the channel URLs (nor their SHA256), is in the folder
        #expect(try secretsFound() == [])
        let records = try String(contentsOf: folder.appending("records"), encoding: .utf8)
        #expect(records.hasSuffix("encryption aes-256-gcm \(Encryption.aes256gcm(key: Self.key).keyID)\n"))
        #expect(try Data(contentsOf: folder.appending("format")) == Data("flatcache 2\n".utf8))

        // And everything reads back with the key
        let cache = try open()
        #expect(try cache.messages.loadNow(in: "secret-url-alpha").map(\.text) == ["Whispered text one"])
        #expect(try cache.messages.loadNow(in: "secret-url-beta").map(\.text) == ["Whispered text two"])
        #expect(try cache.channels.blocking.load().map(\.name) == ["Channel Named Saffron"])
        #expect(try cache.users.loadNow().map(\.nickname) == ["Nickname Zanzibar"])
        #expect(try await cache.messages.continuity(in: "secret-url-alpha").changeLogToken == "continuity-token-quartz")
        #expect(try await cache.channels.changeLogToken() == "list-token-onyx")
        #expect(try await cache.outbox.entries().map(\.message.text) == ["outbox text umber"])
        let verified = try cache.blocking.verify()
        #expect(verified.filter { !$0.isValid } == [])
        #expect(verified.filter { $0.path.hasPrefix("messages/") }.count == 3)
    }

    @Test func thePlainFolderShowsItsTextSoTheCheckAboveCanFail() async throws {
        try await fillEveryFileKind(try open(nil))
        #expect(try secretsFound() == Self.secrets.sorted())
    }

    @Test func sidecarsStaySHA256OfTheBytesAsStored() async throws {
        try await fillEveryFileKind(try open())
        let messages = folder.appending("messages")
        for name in try FileManager.default.contentsOfDirectory(atPath: messages.path) where name.hasSuffix(".lines") {
            let data = try Data(contentsOf: messages.appendingPathComponent(name))
            let sidecar = try String(contentsOf: messages.appendingPathComponent(name + ".sha256"), encoding: .utf8)
            #expect(sidecar == "\(SHA256Digest(of: data).hex)  \(name)\n")
        }
    }

    // MARK: - Keys at open

    @Test func aWrongKeyThrowsAtOpenAndTouchesNothing() async throws {
        try await fillEveryFileKind(try open())
        let before = try snapshot()

        #expect(throws: FlatCacheError.self) { try open(Self.otherKey) }
        do {
            _ = try open(Self.otherKey)
        } catch {
            guard case .wrongEncryptionKey(_, let keyID, let given) = error else { throw error }
            #expect(keyID == Encryption.aes256gcm(key: Self.key).keyID)
            #expect(given == Encryption.aes256gcm(key: Self.otherKey).keyID)
        }
        #expect(try snapshot() == before)
    }

    @Test func noKeyThrowsAtOpenAndTouchesNothing() async throws {
        try await fillEveryFileKind(try open())
        let before = try snapshot()
        do {
            _ = try open(nil)
            Issue.record("an encrypted folder opened without its key")
        } catch {
            guard case .encryptionKeyRequired(_, let keyID) = error else { throw error }
            #expect(keyID == Encryption.aes256gcm(key: Self.key).keyID)
        }
        var readOnly = Self.configuration(nil)
        readOnly.readOnly = true
        #expect(throws: FlatCacheError.self) { try Cache(directory: folder.url, configuration: readOnly) }
        #expect(try snapshot() == before)
    }

    @Test func aPlainFolderWithDataIsNotOpenedWithAKey() async throws {
        try await fillEveryFileKind(try open(nil))
        let before = try snapshot()
        do {
            _ = try open()
            Issue.record("a plain folder opened with a key")
        } catch {
            guard case .folderNotEncrypted = error else { throw error }
        }
        #expect(try snapshot() == before)
    }

    @Test func anEmptyPlainFolderTakesTheKey() throws {
        _ = try open(nil)  // a plain cache, never written
        let cache = try open()
        try cache.messages.saveNow(Fixtures.messages(2))
        #expect(try open().messages.loadNow(in: Fixtures.channelURL) == Fixtures.messages(2))
        #expect(throws: FlatCacheError.self) { try open(nil) }
    }

    @Test func aKeyOfTheWrongLengthIsRefused() throws {
        do {
            _ = try open(Data(count: 16))
            Issue.record("a 16-byte key was taken")
        } catch {
            guard case .invalidEncryptionKey(16) = error else { throw error }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path) == [])
    }

    @Test func theDescriptionShowsTheKeyIDNeverTheKey() {
        let encryption = Encryption.aes256gcm(key: Self.key)
        #expect("\(encryption)" == "aes256gcm(key \(encryption.keyID))")
        #expect(encryption.keyID.count == 16)
        #expect(Encryption.randomKey().count == 32)
        #expect(Encryption.randomKey() != Encryption.randomKey())
    }

    /// Every file's relative path and bytes.
    func snapshot() throws -> [String: Data] {
        var files = [String: Data]()
        for relative in try FileManager.default.subpathsOfDirectory(atPath: folder.url.path) {
            let url = folder.appending(relative)
            var isFolder: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder)
            files[relative] = isFolder.boolValue ? Data() : try Data(contentsOf: url)
        }
        return files
    }
}
