@testable import FlatCache
import Foundation
import Testing

/// An encrypted folder with every kind of data file, written with a fixed key
/// (bytes 0x00...0x1f) and fixed nonces (1, 2, 3, ...), must give the
/// checked-in `Golden/encrypted` byte for byte, and read back as what was
/// saved: the sealed form of format 1 cannot change unnoticed.
@Suite struct EncryptedGoldenTests {
    typealias Cache = ChatCache<ChatMessage, ChatChannel, ChatUser>
    let folder: TemporaryFolder

    init() throws {
        folder = try TemporaryFolder()
    }

    /// The golden's key: the 32 bytes 0x00, 0x01, ..., 0x1f.
    static let key = Data(0...31)
    /// The golden's time: 2023-11-14 22:13:20 UTC.
    static let now: Int64 = 1_700_000_000_000
    static let channelURLs = ["plans", "trip"]

    static func configuration(nonces start: UInt64 = 1, readOnly: Bool = false) -> Configuration {
        var configuration = Configuration(clock: CacheClock { Date(timeIntervalSince1970: TimeInterval(now / 1_000)) })
        configuration.readOnly = readOnly
        configuration.encryption = .aes256gcm(key: key)
        configuration.nonceSource = .counter(NonceCounter(start: start))
        return configuration
    }

    static func messages(in channelURL: String) -> [ChatMessage] {
        Fixtures.messages(3, in: channelURL)
    }

    static let outboxMessage = ChatMessage(messageID: 0, channelURL: "trip", createdAt: now, sender: Fixtures.mina, text: "On my way")

    /// Writes the golden's content into `root`, each step flushed so that
    /// nonces go to files in one order. `usage.lines` is written last.
    static func write(into root: URL) async throws {
        let cache = try Cache(directory: root, configuration: configuration())
        try await cache.channels.replace(with: [
            Fixtures.channel("plans", lastMessageAt: 3_000), Fixtures.channel("trip", lastMessageAt: 3_000),
        ])
        _ = try await cache.flush()
        try await cache.channels.setChangeLogToken("list-1")
        _ = try await cache.flush()
        for url in channelURLs {
            try await cache.messages.replace(messages(in: url), in: url, covering: ChannelContinuity.channelStart...5_000)
            _ = try await cache.flush()
        }
        try await cache.messages.setChangeLogToken("changes-1", in: "plans")
        _ = try await cache.flush()
        try await cache.users.save([Fixtures.mina])
        _ = try await cache.flush()
        try await cache.outbox.send(outboxMessage, requestID: "trip-1")
        _ = try await cache.flush()
        try await cache.close()
    }

    /// The usage file holds each message file's inode and modification time,
    /// which differ on every run: it is checked by opening it, then set aside.
    static func removeUsage(from root: URL) throws {
        let usage = RecordFile(path: root.appendingPathComponent("usage.lines").path, sealer: try Sealer(.aes256gcm(key: key)))
        guard case .records(let records) = try usage.load(finishing: false).contents else {
            Issue.record("usage.lines does not open with the key")
            return
        }
        #expect(records.records.map(\.count) == [73, 73])
        for name in ["usage.lines", "usage.lines.sha256"] {
            try? FileManager.default.removeItem(at: root.appendingPathComponent(name))
        }
    }

    @Test(.timeLimit(.minutes(1))) func anEncryptedFolderIsPinnedByAGolden() async throws {
        let root = folder.appending("cache")
        try await Self.write(into: root)
        try Self.removeUsage(from: root)
        try GoldenFolder.assertMatches(root, golden: "encrypted")
    }

    @Test func theEncryptedGoldenReadsBackWithItsKey() async throws {
        let copy = folder.appending("golden-copy")
        try FileManager.default.copyItem(at: GoldenFolder.url("encrypted"), to: copy)
        let recorder = LogRecorder()
        var configuration = Self.configuration(readOnly: true)
        configuration.logger = recorder.logger
        let cache = try Cache(directory: copy, configuration: configuration)

        #expect(try await cache.channels.load().map(\.channelURL) == ["plans", "trip"])
        #expect(try await cache.channels.changeLogToken() == "list-1")
        for url in Self.channelURLs {
            #expect(try await cache.messages.load(in: url) == Self.messages(in: url))
            #expect(try await cache.messages.continuity(in: url).completeRanges == [ChannelContinuity.channelStart...5_000])
        }
        #expect(try await cache.messages.continuity(in: "plans").changeLogToken == "changes-1")
        #expect(try await cache.users.load() == [Fixtures.mina])
        #expect(try await cache.outbox.entries().map(\.message) == [Self.outboxMessage])
        #expect(recorder.entries.isEmpty, "\(recorder.entries)")
        #expect(try GoldenFolder.differences(between: copy, and: GoldenFolder.url("encrypted")).isEmpty)
    }

    @Test func theEncryptedGoldenShowsNoContentAndNamesItsKey() throws {
        let golden = GoldenFolder.url("encrypted")
        let records = try String(contentsOf: golden.appendingPathComponent("records"), encoding: .utf8)
        #expect(records.hasSuffix("encryption aes-256-gcm \(Encryption.aes256gcm(key: Self.key).keyID)\n"))
        let sealer = try Sealer(.aes256gcm(key: Self.key))
        let names = try FileManager.default.contentsOfDirectory(atPath: golden.appendingPathComponent("messages").path).sorted()
        #expect(names.filter { $0.hasSuffix(".lines") } == Self.channelURLs.map { sealer.fileKey(forChannel: $0) + ".lines" }.sorted())
        for path in try GoldenFolder.files(in: golden) where !["format", "records"].contains(path) && !path.hasSuffix(".sha256") {
            // The bytes as stored, and what their Base64 lines hold.
            var bytes = try Data(contentsOf: golden.appendingPathComponent(path))
            for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
                bytes += try #require(Data(base64Encoded: String(line)), "\(path)")
            }
            for word in ["plans", "trip", "Mina", "mina", "message 1", "On my way", "list-1", "changes-1"] {
                #expect(bytes.range(of: Data(word.utf8)) == nil, "\(path) shows \(word)")
            }
        }
    }
}
