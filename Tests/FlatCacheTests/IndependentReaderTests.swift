@testable import FlatCache
import Foundation
import Testing

/// `Scripts/read-cache.py`, a reader written from `docs/format.md` alone in
/// Python with no FlatCache code, reads the golden folders, and folders a
/// crash or another writer left, exactly as FlatCache does: the page is
/// enough to write a reader without guessing.
@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")))
struct IndependentReaderTests {
    typealias Cache = ChatCache<ChatMessage, ChatChannel, ChatUser>
    let folder: TemporaryFolder

    init() throws {
        folder = try TemporaryFolder()
    }

    /// What a reader makes of a folder, in the script's JSON form.
    struct Snapshot: Codable, Equatable {
        struct Continuity: Codable, Equatable {
            var ranges: [[Int64]]
            var token: String?
        }
        var channels: [String]
        var users: [String]
        var messages: [String: [Int64]]
        var continuity: [String: Continuity]
        var channelsToken: String?
        var usage: [String: [Int64]]
        var damaged: [String]
    }

    static let script = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Scripts/read-cache.py")

    func python(_ directory: URL, keeping n: Int, key: Data? = nil) throws -> Snapshot {
        try python(directory, keeping: n, key: key, as: Snapshot.self)
    }

    func python<Reading: Decodable>(_ directory: URL, keeping n: Int, key: Data? = nil, as: Reading.Type) throws -> Reading {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [Self.script.path, directory.path, "\(n)"] + (try key.map { try keyFile($0) } ?? [])
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return try JSONDecoder().decode(Reading.self, from: data)
    }

    func flatCache(_ directory: URL, keeping n: Int, key: Data? = nil) throws -> Snapshot {
        let damaged = DamageRecorder()
        var configuration = damaged.configuration(readOnly: true)
        configuration.encryption = key.map { .aes256gcm(key: $0) }
        let sealer = try key.map { try Sealer(.aes256gcm(key: $0)) }
        configuration.maxMessagesPerChannel = n
        configuration.memoryLimit = 0
        let cache = try Cache(directory: directory, configuration: configuration)
        var snapshot = Snapshot(
            channels: try cache.channels.load().map(\.channelURL), users: try cache.users.load().map(\.userID),
            messages: [:], continuity: [:], channelsToken: try cache.channels.changeLogToken(), usage: [:], damaged: [])
        // Message files are named by a hash: an empty one's channel is known only by name.
        let urls = Set(try cache.messages.loadAll().map(\.channelURL) + snapshot.channels + ["quiet"])
        for url in urls {
            let key = sealer?.fileKey(forChannel: url) ?? SHA256Digest(of: Data(url.utf8)).hex
            guard FileManager.default.fileExists(atPath: directory.appendingPathComponent("messages/\(key).lines").path) else { continue }
            snapshot.messages[key] = try cache.messages.load(in: url).map(\.messageID)
            let continuity = try cache.messages.continuity(in: url)
            if !continuity.completeRanges.isEmpty || continuity.changeLogToken != nil {
                snapshot.continuity[key] = .init(
                    ranges: continuity.completeRanges.map { [$0.lowerBound, $0.upperBound] }, token: continuity.changeLogToken)
            }
        }
        let usage = try ChannelUsage.read(RecordFile(path: directory.appendingPathComponent("usage.lines").path, sealer: sealer), logger: .init(label: "test"))
        for (name, times) in usage { snapshot.usage[String(name.dropLast(6))] = [times.saved, times.used] }
        snapshot.damaged = Set(damaged.files.map(\.path)).sorted()
        // A damaged message file holds no messages to the script: not even none.
        for path in snapshot.damaged where path.hasPrefix("messages/") && path.hasSuffix(".lines") {
            snapshot.messages[String(path.dropFirst(9).dropLast(6))] = nil
        }
        return snapshot
    }

    func expectSameReading(
        _ directory: URL, keeping n: Int, key: Data? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        var independent = try python(directory, keeping: n, key: key)
        independent.damaged.sort()
        let library = try flatCache(directory, keeping: n, key: key)
        #expect(independent == library, "\(directory.lastPathComponent), N = \(n)", sourceLocation: sourceLocation)
    }

    @Test func theGoldenFoldersReadTheSame() throws {
        for golden in ["worked-example", "continuity", "every-file", "sample-cache", "appended-within-slack", "compacted-past-slack", "appended-edits"] {
            for n in [1, 2, 8, 200] { try expectSameReading(GoldenFolder.url(golden), keeping: n) }
        }
    }

    @Test func foldersACrashOrAnotherWriterLeftReadTheSame() throws {
        let root = folder.appending("cache")
        try FileManager.default.copyItem(at: GoldenFolder.url("every-file"), to: root)
        let key = SHA256Digest(of: Data("plans".utf8)).hex
        let messages = root.appendingPathComponent("messages/\(key).lines")
        // An unfinished append after the message file, and one after an empty users.lines.
        try (try Data(contentsOf: messages) + Data("QUJD\nxx".utf8)).write(to: messages)
        try Data("QUJD\n".utf8).write(to: root.appendingPathComponent("users.lines"))
        try Data((SHA256Digest(of: Data()).hex + "  users.lines\n").utf8).write(to: root.appendingPathComponent("users.lines.sha256"))
        // The channel list's sidecar missing, complete in its waiting file.
        try FileManager.default.moveItem(
            at: root.appendingPathComponent("channels.lines.sha256"), to: root.appendingPathComponent(".channels.lines.sha256.tmp"))
        for n in [1, 2, 3, 200] { try expectSameReading(root, keeping: n) }

        // A damaged continuity file, then a message file gone from under its continuity.
        let continuity = root.appendingPathComponent("messages/\(key).continuity")
        try Data("AQ==\n".utf8).write(to: continuity)
        try expectSameReading(root, keeping: 200)
        try FileManager.default.removeItem(at: messages)
        try FileManager.default.removeItem(at: messages.appendingPathExtension("sha256"))
        try expectSameReading(root, keeping: 200)
    }

    /// usage.lines as FlatCache writes it (version 2 records, with the message file's stamp),
    /// beside a version 1 record, reads the same; a record of another length is damage to both.
    @Test func usageRecordsOfBothVersionsReadTheSame() async throws {
        let root = folder.appending("cache")
        let cache = try Cache(directory: root)
        try await cache.messages.replace(Fixtures.messages(2, in: "a"), in: "a")
        try await cache.messages.replace(Fixtures.messages(2, in: "b"), in: "b")
        try await cache.close()
        let usage = root.appendingPathComponent("usage.lines")
        var records = try String(decoding: Data(contentsOf: usage), as: UTF8.self).split(separator: "\n")
            .map { try #require(Data(base64Encoded: String($0))) }
        #expect(records.map(\.count) == [73, 73])
        records[0] = Data([1]) + records[0][1..<49]
        func write(_ records: [Data]) throws {
            let lines = Data(records.map { $0.base64EncodedString() + "\n" }.joined().utf8)
            try lines.write(to: usage)
            try Data("\(SHA256Digest(of: lines).hex)  usage.lines\n".utf8).write(to: root.appendingPathComponent("usage.lines.sha256"))
        }
        try write(records)
        let read = try python(root, keeping: 200)
        #expect(read.usage.count == 2 && read.damaged.isEmpty, "\(read)")
        try expectSameReading(root, keeping: 200)
        try write([records[0] + Data([0])])
        #expect(try python(root, keeping: 200).damaged == ["usage.lines"])
    }

    /// channels.lines and users.lines as FlatCache appends to them (format 2):
    /// an upsert that moves a channel to the top, a channel's removal, a
    /// user's upsert and removal, plain and sealed, read the same.
    @Test func appendedChannelAndUserLinesReadTheSame() throws {
        for key in [nil, EncryptedGoldenTests.key] {
            let root = folder.appending(key == nil ? "plain" : "sealed")
            var configuration = Configuration()
            configuration.encryption = key.map { .aes256gcm(key: $0) }
            let cache = try Cache(directory: root, configuration: configuration)
            try cache.channels.blocking.replace(with: [
                Fixtures.channel("trip", lastMessageAt: 3_000), Fixtures.channel("cafe", lastMessageAt: 2_000),
                Fixtures.channel("plans", lastMessageAt: 1_000),
            ])
            try cache.users.blocking.save([Fixtures.mina, ChatUser(userID: "ana", nickname: "Ana"), ChatUser(userID: "Zoe", nickname: "Zoe")])
            // Appended: plans moves to the top, trip goes, bob comes, ana goes.
            try cache.channels.blocking.save([Fixtures.channel("plans", lastMessageAt: 9_000)])
            try cache.channels.blocking.remove(channelURL: "trip")
            try cache.users.blocking.save([ChatUser(userID: "bob", nickname: "Bob")])
            try cache.users.blocking.remove(userIDs: ["ana"])
            for file in ["channels.lines", "users.lines"] {
                let found = try lines(file, in: root)
                #expect(found.contains { $0.hasPrefix("*") } && found.contains { $0.hasPrefix("-") }, "\(file): \(found)")
            }
            let read = try python(root, keeping: 200, key: key)
            #expect(read.channels == ["plans", "cafe"] && read.users == ["Zoe", "bob", "mina"] && read.damaged.isEmpty, "\(read)")
            try expectSameReading(root, keeping: 200, key: key)
        }
    }

    // MARK: - outbox.lines

    /// What a reader makes of `outbox.lines`: the entries still in the outbox, in queue order.
    struct OutboxReading: Codable, Equatable {
        struct Entry: Codable, Equatable {
            var requestID: String
            var channelURL: String
            var queuedAt: Int64
            var state: String
            var attempts: Int
            var reason: String
            var messageID: Int64
            var text: String
        }
        var outbox: [Entry]
        var damaged: [String]
    }

    func flatCacheOutbox(_ directory: URL, key: Data? = nil) async throws -> OutboxReading {
        let damaged = DamageRecorder()
        var configuration = damaged.configuration(readOnly: true)
        configuration.encryption = key.map { .aes256gcm(key: $0) }
        let cache = try Cache(directory: directory, configuration: configuration)
        let entries = try await cache.outbox.entries().map { entry in
            let (state, reason): (String, String) =
                switch entry.state {
                case .pending: ("pending", entry.lastFailure ?? "")
                case .sending: ("sending", entry.lastFailure ?? "")
                case .failed(let reason, _): ("failed", reason)
                case .sent: ("sent", "")
                }
            return OutboxReading.Entry(
                requestID: entry.requestID, channelURL: entry.channelURL, queuedAt: entry.queuedAt, state: state,
                attempts: entry.attempts, reason: reason, messageID: entry.message.messageID, text: entry.message.text)
        }
        return OutboxReading(outbox: entries, damaged: Set(damaged.files.map(\.path)).sorted())
    }

    func expectSameOutbox(_ directory: URL, key: Data? = nil, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let independent = try python(directory, keeping: 200, key: key, as: OutboxReading.self)
        let library = try await flatCacheOutbox(directory, key: key)
        #expect(independent == library, sourceLocation: sourceLocation)
    }

    /// The golden outbox (sent, sending, failed, pending and cancelled lines),
    /// one a crash left with an unfinished append or a waiting sidecar, a
    /// compacted one, and a damaged one read the same.
    @Test func theOutboxReadsTheSame() async throws {
        let golden = try python(GoldenFolder.url("outbox"), keeping: 200, as: OutboxReading.self)
        #expect(golden.outbox.map(\.requestID) == ["trip-2", "cafe-1", "cafe-2"])
        #expect(golden.outbox.map(\.state) == ["sending", "failed", "pending"])
        try await expectSameOutbox(GoldenFolder.url("outbox"))

        let root = folder.appending("cache")
        try FileManager.default.copyItem(at: GoldenFolder.url("outbox"), to: root)
        let file = root.appendingPathComponent("outbox.lines")
        let whole = try Data(contentsOf: file)
        try (whole + Data("QUJD\nxx".utf8)).write(to: file)
        try await expectSameOutbox(root)
        try whole.write(to: file)
        try FileManager.default.moveItem(
            at: root.appendingPathComponent("outbox.lines.sha256"), to: root.appendingPathComponent(".outbox.lines.sha256.tmp"))
        try await expectSameOutbox(root)

        // Compacted: 70 entries queued, 68 cancelled.
        let compacted = folder.appending("compacted")
        let cache = try Cache(directory: compacted)
        for index in 0..<70 {
            try await cache.outbox.send(
                ChatMessage(messageID: 0, channelURL: "c\(index % 3)", createdAt: Int64(index), text: "m\(index)"),
                requestID: "r\(index)")
        }
        for index in 1..<69 { try await cache.outbox.cancel("r\(index)") }
        let lines = try String(decoding: Data(contentsOf: compacted.appendingPathComponent("outbox.lines")), as: UTF8.self)
        #expect(lines.split(separator: "\n").count < 70 + 68, "never compacted")
        let reading = try python(compacted, keeping: 200, as: OutboxReading.self)
        #expect(reading.outbox.map(\.requestID) == ["r0", "r69"])
        try await expectSameOutbox(compacted)

        // A request id queued again after it left is a new entry at the end of the queue.
        let requeued = folder.appending("requeued")
        let again = try Cache(directory: requeued)
        for id in ["a", "b"] {
            try await again.outbox.send(ChatMessage(messageID: 0, channelURL: "c", createdAt: 0, text: id), requestID: id)
        }
        try await again.outbox.cancel("a")
        try await again.outbox.send(ChatMessage(messageID: 0, channelURL: "c", createdAt: 0, text: "a again"), requestID: "a")
        #expect(try python(requeued, keeping: 200, as: OutboxReading.self).outbox.map(\.requestID) == ["b", "a"])
        try await expectSameOutbox(requeued)

        var bytes = whole
        bytes[20] ^= 1
        try bytes.write(to: file)
        #expect(try python(root, keeping: 200, as: OutboxReading.self).damaged == ["outbox.lines"])
        try await expectSameOutbox(root)
    }
}
