@testable import FlatCache
import Foundation
import Testing

/// Appends, pinned byte for byte: a channel at its limit that took newer
/// messages one at a time holds them in its slack (more lines than the
/// limit), and the write that would pass limit + slack compacts it. An
/// appended file is the very file a full rewrite of its records writes, and
/// a reader of format version 1 reads its newest messages from its last lines.
extension GoldenTests {
    /// The limit of these goldens, and its slack (8 too: up to 16 lines).
    static let appendLimit = 8

    /// Message `id` of the append goldens' channel, created at `id` seconds.
    static func appended(_ id: Int64) -> ChatMessage {
        Fixtures.message(id, at: id * 1_000)
    }

    /// `messages/<key>.lines` of the fixtures' channel in `directory`.
    static func messageFile(in directory: URL) -> URL {
        directory.appendingPathComponent("messages/" + SHA256Digest(of: Data(Fixtures.channelURL.utf8)).hex + ".lines")
    }

    static func inode(_ file: URL) throws -> UInt64 {
        var info = stat()
        guard lstat(file.path, &info) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        return UInt64(info.st_ino)
    }

    /// Replaces the channel with messages 1...8, then saves each of `newer` on
    /// its own, synchronously, checking that each was appended (same file, one
    /// line more) while the file stays within limit + slack.
    func saveOneAtATime(_ newer: ClosedRange<Int64>, into directory: URL) throws {
        let limit = Self.appendLimit
        let cache = try ChatCache(directory: directory, configuration: Configuration(maxMessagesPerChannel: limit))
        try cache.messages.replace((1...Int64(limit)).map(Self.appended), in: Fixtures.channelURL)
        let file = Self.messageFile(in: directory)
        for id in newer {
            let before = try Self.inode(file)
            try cache.messages.save([Self.appended(id)])
            let lines = try Data(contentsOf: file).count(where: { $0 == 0x0A })
            if id <= Int64(limit + MessageStore<ChatMessage>.slack(forLimit: limit)) {
                #expect(try Self.inode(file) == before, "message \(id) was not appended")
                #expect(lines == Int(id))
            } else {
                #expect(lines == limit, "message \(id) did not compact the file")
            }
        }
    }

    /// The file a full rewrite writes for `records` (a `replace` with a limit that keeps them all).
    func rewritten(_ records: [ChatMessage], in name: String) throws -> (data: Data, sidecar: Data) {
        let directory = folder.appending(name)
        let cache = try ChatCache(directory: directory, configuration: Configuration(maxMessagesPerChannel: records.count))
        try cache.messages.replace(records, in: Fixtures.channelURL)
        let file = Self.messageFile(in: directory)
        return (try Data(contentsOf: file), try Data(contentsOf: file.appendingPathExtension("sha256")))
    }

    @Test func fourNewerMessagesAreAppendedWithinTheSlackToTheGoldenFile() async throws {
        // Given a channel at its limit of 8 (slack 8)
        #expect(MessageStore<ChatMessage>.slack(forLimit: Self.appendLimit) == 8)
        let directory = folder.appending("appended")

        // When messages 9...12 arrive one at a time (each appended, see saveOneAtATime)
        try saveOneAtATime(9...12, into: directory)

        // Then the folder is the golden one: 12 lines, 4 past the limit
        try GoldenFolder.assertMatches(directory, golden: "appended-within-slack")
        let file = Self.messageFile(in: directory)
        let data = try Data(contentsOf: file)
        #expect(data.count(where: { $0 == 0x0A }) == 12)

        // and those bytes are exactly what a full rewrite of the 12 records in canonical order writes
        let all = (1...Int64(12)).map(Self.appended)
        let rewrite = try rewritten(all, in: "rewritten-12")
        #expect(data == rewrite.data, "an append keeps canonical order: the same bytes as a rewrite")
        #expect(try Data(contentsOf: file.appendingPathExtension("sha256")) == rewrite.sidecar)
        #expect(data == Data(try all.map { try $0.serialize().base64EncodedString() + "\n" }.joined().utf8))

        // and async saves, each flushed, append the same bytes
        let asyncDirectory = folder.appending("appended-async")
        let cache = try ChatCache(directory: asyncDirectory, configuration: Configuration(maxMessagesPerChannel: Self.appendLimit))
        try await cache.messages.replace((1...Int64(8)).map(Self.appended), in: Fixtures.channelURL)
        try await cache.flush()
        let inode = try Self.inode(Self.messageFile(in: asyncDirectory))
        for id in Int64(9)...12 {
            try await cache.messages.save([Self.appended(id)])
            try await cache.flush()
        }
        #expect(try Self.inode(Self.messageFile(in: asyncDirectory)) == inode)
        // usage.lines holds when these saves ran (UsageTests pins its form); the sync saves above write none.
        for name in ["usage.lines", "usage.lines.sha256"] {
            try FileManager.default.removeItem(at: asyncDirectory.appendingPathComponent(name))
        }
        #expect(try GoldenFolder.differences(between: asyncDirectory, and: GoldenFolder.url("appended-within-slack")).isEmpty)
    }

    @Test func passingLimitPlusSlackCompactsToTheGoldenFile() throws {
        // Given the channel of the golden above, filled up to limit + slack (16 lines)
        let directory = folder.appending("compacted")

        // When messages 9...17 arrive one at a time: the 17th would make 17 lines
        try saveOneAtATime(9...17, into: directory)

        // Then the file was rewritten with the newest 8 (10...17), as the golden pins
        try GoldenFolder.assertMatches(directory, golden: "compacted-past-slack")
        let file = Self.messageFile(in: directory)
        let rewrite = try rewritten((10...Int64(17)).map(Self.appended), in: "rewritten-8")
        #expect(try Data(contentsOf: file) == rewrite.data)
        #expect(try Data(contentsOf: file.appendingPathExtension("sha256")) == rewrite.sidecar)
    }

    @Test func readersOfFormatOneReadTheNewestMessagesOfTheAppendedGolden() throws {
        // Given a copy of the appended golden (loads must never touch the checked-in one)
        let copy = folder.appending("appended-copy")
        try FileManager.default.copyItem(at: GoldenFolder.url("appended-within-slack"), to: copy)
        let damage = DamageRecorder()

        // When a fresh cache with the golden's limit of 8 loads the channel
        var configuration = damage.configuration()
        configuration.maxMessagesPerChannel = Self.appendLimit
        let loaded = try ChatCache(directory: copy, configuration: configuration).messages.load(in: Fixtures.channelURL)

        // Then it gets the newest 8 (5...12), and a cache with the default limit gets all 12 lines
        #expect(loaded == (5...Int64(12)).map(Self.appended))
        let all = try ChatCache(directory: copy, configuration: damage.configuration()).messages.load(in: Fixtures.channelURL)
        #expect(all == (1...Int64(12)).map(Self.appended))
        #expect(damage.files.isEmpty)

        // and a plain reader of the format (check the sidecar, decode each line, keep the last 8) agrees
        let file = Self.messageFile(in: copy)
        let data = try Data(contentsOf: file)
        let sidecar = try String(contentsOf: file.appendingPathExtension("sha256"), encoding: .utf8)
        #expect(sidecar == "\(SHA256Digest(of: data).hex)  \(file.lastPathComponent)\n")
        let records = try String(decoding: data, as: UTF8.self).split(separator: "\n").map { line in
            try ChatMessage(serializedData: try #require(Data(base64Encoded: String(line))))
        }
        #expect(Array(records.suffix(Self.appendLimit)) == loaded)

        // and nothing in the copy changed
        #expect(try GoldenFolder.differences(between: copy, and: GoldenFolder.url("appended-within-slack")).isEmpty)
    }
}
