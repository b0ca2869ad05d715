@testable import FlatCache
import Foundation
import Testing

/// The `flatcache` tool on encrypted folders (issue 25): `--key-file` as raw
/// bytes or hex, a bad key file, a wrong or missing key, `verify` without the
/// key checking every sidecar, `info` showing the key id, and `import` and
/// `export` with the key; text and `--json`.
@Suite(.timeLimit(.minutes(3))) struct CLIEncryptionTests {
    typealias Cache = ChatCache<ChatMessage, ChatChannel, ChatUser>

    let folder: TemporaryFolder
    /// The encrypted cache, `enc` in the temporary folder.
    let cache: URL
    static let key = Data((0..<32).map { UInt8($0) })
    static let otherKey = Data((0..<32).map { UInt8(255 - $0) })
    static let keyID = Encryption.aes256gcm(key: key).keyID

    init() throws {
        folder = try TemporaryFolder()
        cache = folder.appending("enc")
        try Self.key.write(to: folder.appending("raw.key"))
        try Data((Self.hex(Self.key) + "\n").utf8).write(to: folder.appending("hex.key"))
    }

    static func hex(_ bytes: Data) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    func flatcache(_ arguments: [String], input: Data? = nil) throws -> ToolRun {
        try ToolRun(arguments, in: folder.url, input: input)
    }

    /// Fills the encrypted cache with every file kind: two channels' messages
    /// and their continuity, the channel list and its continuity, users, the
    /// outbox and `usage.lines`.
    func fill() async throws {
        var configuration = Configuration(logger: LogRecorder().logger)
        configuration.encryption = .aes256gcm(key: Self.key)
        let cache = try Cache(directory: cache, configuration: configuration)
        let author = ChatUser(userID: "user-1", nickname: "Nickname Zanzibar")
        try cache.messages.saveNow([
            ChatMessage(messageID: 1, channelURL: "alpha", createdAt: 1_000, sender: author, text: "Whispered text one"),
            ChatMessage(messageID: 2, channelURL: "beta", createdAt: 2_000, sender: author, text: "Whispered text two"),
        ])
        try cache.channels.blocking.replace(with: [
            ChatChannel(channelURL: "alpha", kind: .group, name: "Channel Named Saffron", memberCount: 2, createdAt: 0)
        ])
        try cache.users.saveNow([author])
        try await cache.messages.setChangeLogToken("token-quartz", in: "alpha")
        try await cache.channels.setChangeLogToken("token-onyx")
        _ = try await cache.outbox.send(
            ChatMessage(messageID: 0, channelURL: "beta", createdAt: 3_000, sender: author, text: "outbox text"),
            requestID: "request-1")
        try await cache.close()
        let names = try FileManager.default.subpathsOfDirectory(atPath: self.cache.path)
        for kind in ["usage.lines", "channels.continuity", "outbox.lines"] { try #require(names.contains(kind)) }
        try #require(names.contains { $0.hasPrefix("messages/") && $0.hasSuffix(".continuity") })
    }

    /// The path inside the cache of the message file of `channelURL`.
    func messageFile(_ channelURL: String) throws -> String {
        try CacheFolderSummary.messagesFilePath(forChannel: channelURL, encryption: .aes256gcm(key: Self.key))
    }

    func flipByte(of path: String, at index: Int = 20) throws {
        let url = cache.appendingPathComponent(path)
        var bytes = try Data(contentsOf: url)
        bytes[index] ^= 1
        try bytes.write(to: url)
    }

    /// Every file of the cache and its bytes.
    func snapshot() throws -> [String: Data] {
        var files = [String: Data]()
        for path in try FileManager.default.subpathsOfDirectory(atPath: cache.path) {
            var isFolder: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: cache.path + "/" + path, isDirectory: &isFolder)
            if !isFolder.boolValue { files[path] = try Data(contentsOf: cache.appendingPathComponent(path)) }
        }
        return files
    }

    func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    // MARK: - The key file

    @Test func aKeyFileOfRawBytesOrHexOpensTheCache() async throws {
        try await fill()
        try Data(("  " + Self.hex(Self.key).uppercased() + "\r\n\n").utf8).write(to: folder.appending("spaced.key"))
        for keyFile in ["raw.key", "hex.key", "spaced.key"] {
            let run = try flatcache(["users", "enc", "--key-file", keyFile])
            #expect(run.status == 0, "\(keyFile): \(run.stderr)")
            #expect(run.stdout.contains("Nickname Zanzibar"), "\(keyFile): \(run.stdout)")
        }
    }

    @Test func aBadKeyFileIsOneClearErrorAndExitStatus1() async throws {
        try await fill()
        try Data(Self.key.prefix(31)).write(to: folder.appending("short.key"))
        try Data(String(repeating: "g", count: 64).utf8).write(to: folder.appending("not-hex.key"))
        let cases = [
            ("missing.key", "Error: Cannot read the key file missing.key: No such file or directory.\n"),
            ("enc", "Error: Cannot read the key file enc: it is not a regular file.\n"),
            ("short.key", "Error: The key file short.key holds 31 bytes, not a key: give 32 raw bytes, or 64 hex digits (a newline after them is fine).\n"),
            ("not-hex.key", "Error: The key file not-hex.key holds 64 bytes, not a key: give 32 raw bytes, or 64 hex digits (a newline after them is fine).\n"),
        ]
        for (keyFile, message) in cases {
            for command in [["info", "enc"], ["verify", "enc"], ["import", "new", "--file", "raw.key"]] {
                let run = try flatcache(command + ["--key-file", keyFile])
                #expect(run.status == 1 && run.stderr == message, "\(command) \(keyFile): \(run.stderr)")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: folder.appending("new").path))
    }

    @Test func aWrongKeyNamesBothKeyIDsAndChangesNothing() async throws {
        try await fill()
        try Self.otherKey.write(to: folder.appending("other.key"))
        let before = try snapshot()
        let otherID = Encryption.aes256gcm(key: Self.otherKey).keyID
        for command in [["channels", "enc"], ["verify", "enc"], ["verify", "enc", "--repair"], ["info", "enc", "--json"]] {
            let run = try flatcache(command + ["--key-file", "other.key"])
            #expect(run.status == 1, "\(command)")
            #expect(run.stderr == "Error: The cache at \(cache.path) is encrypted with key \(Self.keyID), not with the key in the key file (\(otherID)); nothing was read or changed.\n", "\(command)")
        }
        #expect(try snapshot() == before)
    }

    @Test func commandsThatNeedRecordsAskForTheKeyByItsID() async throws {
        try await fill()
        let message = "Error: The cache at \(cache.path) is encrypted with key \(Self.keyID): give that key with --key-file <path>.\n"
        for command in [["channels", "enc"], ["users", "enc", "--json"], ["messages", "enc", "alpha"], ["outbox", "enc"], ["export", "enc"], ["verify", "enc", "--repair"]] {
            let run = try flatcache(command)
            #expect(run.status == 1 && run.stdout.isEmpty, "\(command): \(run.stdout)")
            #expect(run.stderr == message, "\(command): \(run.stderr)")
        }
    }

    @Test func aPlainCacheGivenAKeySaysToRunWithoutIt() throws {
        try FileManager.default.copyItem(at: GoldenFolder.url("sample-cache"), to: folder.appending("plain"))
        let run = try flatcache(["users", "plain", "--key-file", "raw.key"])
        #expect(run.status == 1)
        #expect(run.stderr == "Error: The cache at \(folder.appending("plain").path) is not encrypted: run without --key-file.\n")
    }

    // MARK: - verify

    @Test func verifyWithoutTheKeyChecksEverySidecarAndSaysTheFolderIsEncrypted() async throws {
        try await fill()
        let keyed = try flatcache(["verify", "enc", "--key-file", "raw.key"])
        #expect(keyed.status == 0, "\(keyed.stdout)")
        // channels, users, 2 message files, 2 continuity files (the list's, alpha's), outbox, usage, records
        #expect(keyed.stdout == "9 files checked, 0 bad\n")

        let keyless = try flatcache(["verify", "enc"])
        #expect(keyless.status == 0, "\(keyless.stdout)\(keyless.stderr)")
        #expect(keyless.stdout == """
            encrypted with key \(Self.keyID): sidecars checked, no record opened (--key-file opens them)
            9 files checked, 0 bad

            """)

        let json = try self.json(try flatcache(["verify", "enc", "--json"]).stdout)
        #expect(json["keyID"] as? String == Self.keyID)
        #expect(json["recordsDecoded"] as? Bool == false)
        #expect(json["filesChecked"] as? Int == 9 && json["badFilesLeft"] as? Int == 0)
        let keyedJSON = try self.json(try flatcache(["verify", "enc", "--json", "--key-file", "hex.key"]).stdout)
        #expect(keyedJSON["keyID"] as? String == Self.keyID)
        #expect(keyedJSON["recordsDecoded"] as? Bool == true)
    }

    @Test(arguments: ["messages", "continuity", "usage.lines", "outbox.lines"])
    func verifyWithoutTheKeyFindsAFlippedByte(_ kind: String) async throws {
        try await fill()
        let path = switch kind {
        case "messages": try messageFile("alpha")
        case "continuity": String(try messageFile("alpha").dropLast(".lines".count)) + ".continuity"
        default: kind
        }
        try flipByte(of: path)

        let run = try flatcache(["verify", "enc"])

        #expect(run.status == 1)
        #expect(run.stdout.contains("\(path): its SHA256 is "), "\(run.stdout)")
        #expect(run.stdout.hasSuffix("encrypted with key \(Self.keyID): sidecars checked, no record opened (--key-file opens them)\n9 files checked, 1 bad\n"))
        let json = try self.json(try flatcache(["verify", "enc", "--json"]).stdout)
        #expect(json["badFilesLeft"] as? Int == 1)
        let bad = try #require(json["badFiles"] as? [[String: Any]])
        #expect(bad.map { $0["path"] as? String } == [path])
    }

    /// A line of one channel's file moved into another's, its sidecar forged
    /// to match: the sidecars check out, so only the key finds it.
    @Test func onlyVerifyWithTheKeyFindsALineMovedWithItsSidecarForged() async throws {
        try await fill()
        let alpha = cache.appendingPathComponent(try messageFile("alpha"))
        let beta = try Data(contentsOf: cache.appendingPathComponent(try messageFile("beta")))
        try beta.write(to: alpha)
        let name = alpha.lastPathComponent
        try Data("\(SHA256Digest(of: beta).hex)  \(name)\n".utf8).write(to: alpha.appendingPathExtension("sha256"))

        #expect(try flatcache(["verify", "enc"]).status == 0)
        let keyed = try flatcache(["verify", "enc", "--key-file", "raw.key"])
        #expect(keyed.status == 1)
        #expect(keyed.stdout.contains("\(try messageFile("alpha")): line 1 does not open with the cache's key"), "\(keyed.stdout)")
    }

    // MARK: - info

    @Test func infoShowsTheKeyIDWithAndWithoutTheKey() async throws {
        try await fill()
        let keyed = try flatcache(["info", "enc", "--key-file", "hex.key"])
        #expect(keyed.status == 0 && keyed.stderr.isEmpty, "\(keyed.stderr)")
        for row in ["encryption      aes-256-gcm, key \(Self.keyID)\n", "channels        1\n", "messages        2\n", "users           1\n", "outbox          1 queued to send\n"] {
            #expect(keyed.stdout.contains(row), "\(row): \(keyed.stdout)")
        }

        let keyless = try flatcache(["info", "enc"])
        #expect(keyless.status == 0)
        #expect(keyless.stderr == "This folder is encrypted with key \(Self.keyID); without --key-file flatcache opens no record, so it shows lines (one per record), bytes and times.\n")
        for row in ["encryption     aes-256-gcm, key \(Self.keyID)\n", "messages       2\n", "outbox         not opened (encrypted; give --key-file)\n", "last saved     "] {
            #expect(keyless.stdout.contains(row), "\(row): \(keyless.stdout)")
        }

        for arguments in [["info", "enc", "--json"], ["info", "enc", "--json", "--key-file", "raw.key"]] {
            let json = try self.json(try flatcache(arguments).stdout)
            #expect(json["encrypted"] as? Bool == true && json["keyID"] as? String == Self.keyID, "\(arguments)")
            #expect(json["messages"] as? Int == 2 && json["channels"] as? Int == 1, "\(arguments)")
        }
    }

    @Test func infoOfAPlainCacheSaysItIsNotEncrypted() throws {
        try FileManager.default.copyItem(at: GoldenFolder.url("sample-cache"), to: folder.appending("plain"))
        #expect(try flatcache(["info", "plain"]).stdout.contains("\nencryption      none\n"))
        let json = try self.json(try flatcache(["info", "plain", "--json"]).stdout)
        #expect(json["encrypted"] as? Bool == false && json["keyID"] == nil)
    }

    // MARK: - import and export

    @Test func importWithAKeyFileEncryptsAndExportWithItGivesTheSameLines() throws {
        try FileManager.default.copyItem(at: GoldenFolder.url("sample-cache"), to: folder.appending("plain"))
        // An empty message file of a listed channel is exported as such: found under its keyed name.
        let empty = #"{"channelURL":"sendbird_group_channel_books","file":"messages","kind":"empty"}"#
        let exported = try flatcache(["export", "plain"]).stdout
            .replacingOccurrences(of: #"(?m)^\{[^\n]*"channelURL":"sendbird_group_channel_books"[^\n]*"kind":"message"[^\n]*\}\n"#, with: "", options: .regularExpression)
        #expect(!exported.contains(empty))
        let input = exported + empty + "\n"
        // From a file, not standard input: a tool that refuses its arguments would never read it (SIGPIPE here).
        try Data(input.utf8).write(to: folder.appending("export.jsonl"))

        let imported = try flatcache(["import", "enc", "--key-file", "hex.key", "--file", "export.jsonl"])

        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(try String(contentsOf: cache.appendingPathComponent("records"), encoding: .utf8).hasSuffix("encryption aes-256-gcm \(Self.keyID)\n"))
        #expect(try Data(contentsOf: cache.appendingPathComponent("users.lines")).range(of: Data("aisha".utf8)) == nil)
        let again = try flatcache(["export", "enc", "--key-file", "raw.key"])
        #expect(again.status == 0 && again.stderr.isEmpty, "\(again.stderr)")
        #expect(Set(again.stdout.split(separator: "\n")) == Set(input.split(separator: "\n")))
        #expect(again.stdout.contains(empty))
    }
}
