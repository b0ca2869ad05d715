@testable import FlatCache
import Foundation
import Testing

/// `outbox.lines` as `docs/format.md` specifies it: a golden folder written
/// through the public API at fixed times and request ids pins the file byte
/// for byte, every line of it is in the document, and the document's worked
/// line decodes, with FlatCache's own reader, to the fields it names.
extension FormatDocumentTests {
    static let ana = ChatUser(userID: "ana", nickname: "Ana")
    /// The server's copy of `trip-1`: its id, its time, and the request id echoed back.
    static let tripOneOnTheServer = ChatMessage(
        messageID: 101, channelURL: "trip", createdAt: 1_700_000_005_000, sender: ana, text: "Hi 👋", requestID: "trip-1")

    /// Answers by request id: `trip-1` accepted, `cafe-1` refused for good,
    /// anything else never answered (a send under way when the delivery stops).
    struct ScriptedSender: MessageSender {
        func send(_ message: ChatMessage, requestID: String) async throws -> ChatMessage {
            switch requestID {
            case "trip-1": return FormatDocumentTests.tripOneOnTheServer
            case "cafe-1": throw SendFailure.refused("blocked word")
            default:
                try await Task.sleep(for: .seconds(3_600))
                throw SendFailure.temporary("no answer")
            }
        }
    }

    /// A clock that stays where the test puts it.
    final class Now: @unchecked Sendable {
        private let lock = NSLock()
        private var milliseconds: Int64 = 0
        func set(_ value: Int64) { lock.withLock { milliseconds = value } }
        var clock: CacheClock {
            CacheClock { [self] in Date(timeIntervalSince1970: Double(lock.withLock { milliseconds }) / 1_000) }
        }
    }

    /// The golden `outbox`: every state on disk, in an order no scheduling changes.
    ///
    /// `trip-1`, `trip-2`, `trip-3` queued; the delivery sends `trip-1` (sent)
    /// and hangs on `trip-2` (sending); `cafe-1` queued and refused (failed);
    /// the delivery stopped (`trip-2` stays sending); `cafe-2` queued (pending)
    /// and `trip-3` cancelled. Left: `trip-2`, `cafe-1`, `cafe-2`.
    static func writeOutboxGolden(into root: URL) async throws {
        let now = Now()
        let cache = try ChatCache(directory: root, configuration: Configuration(clock: now.clock))
        let outbox = cache.outbox
        let start: Int64 = 1_700_000_000_000
        func queue(_ requestID: String, _ channelURL: String, _ text: String, at offset: Int64) async throws {
            now.set(start + offset)
            try await outbox.send(
                ChatMessage(messageID: 0, channelURL: channelURL, createdAt: start + offset, sender: ana, text: text),
                requestID: requestID)
        }
        var events = outbox.events().makeAsyncIterator()
        func waitFor(_ requestID: String, _ matches: (OutboxEntry<ChatMessage>.State) -> Bool) async {
            while let event = await events.next() {
                if event.entry.requestID == requestID, matches(event.entry.state) { return }
            }
        }
        try await queue("trip-1", "trip", "Hi 👋", at: 0)
        try await queue("trip-2", "trip", "On my way", at: 60_000)
        try await queue("trip-3", "trip", "Bring snacks?", at: 120_000)
        let delivery = OutboxDelivery(
            outbox: outbox, sender: ScriptedSender(), retry: SendRetryPolicy(initialDelay: .seconds(3_600)))
        await delivery.start()
        await waitFor("trip-2") { if case .sending = $0 { true } else { false } }
        try await queue("cafe-1", "cafe", "Coffee? ☕", at: 180_000)
        await waitFor("cafe-1") { if case .failed = $0 { true } else { false } }
        await delivery.stop()
        try await queue("cafe-2", "cafe", "At noon", at: 240_000)
        try await outbox.cancel("trip-3")
    }

    @Test(.timeLimit(.minutes(1))) func theOutboxIsPinnedByAGolden() async throws {
        let root = folder.appending("cache")
        try await Self.writeOutboxGolden(into: root)
        try GoldenFolder.assertMatches(root, golden: "outbox")
    }

    @Test func theOutboxGoldenFoldsToTheEntriesLeft() async throws {
        let cache = try ChatCache(directory: GoldenFolder.url("outbox"), configuration: Configuration(readOnly: true))
        let entries = try await cache.outbox.entries()
        #expect(entries.map(\.requestID) == ["trip-2", "cafe-1", "cafe-2"])
        #expect(entries.map(\.attempts) == [1, 1, 0])
        #expect(entries.map(\.queuedAt) == [1_700_000_060_000, 1_700_000_180_000, 1_700_000_240_000])
        if case .sending = entries[0].state {} else { Issue.record("trip-2: \(entries[0].state)") }
        if case .failed(let reason, let attempts) = entries[1].state {
            #expect(reason == "blocked word" && attempts == 1)
        } else {
            Issue.record("cafe-1: \(entries[1].state)")
        }
        if case .pending = entries[2].state {} else { Issue.record("cafe-2: \(entries[2].state)") }
    }

    @Test func everyLineOfTheOutboxGoldenIsInTheFormatDocument() throws {
        let document = try String(contentsOf: Self.document, encoding: .utf8)
        let golden = GoldenFolder.url("outbox")
        for name in ["outbox.lines", "outbox.lines.sha256"] {
            let text = try String(contentsOf: golden.appendingPathComponent(name), encoding: .utf8)
            for line in text.split(separator: "\n") {
                let found = document.contains("\n" + line + "\n")
                #expect(found, "docs/format.md lacks this line of \(name): \(line)")
            }
        }
    }

    /// The document's worked line is line 5, `trip-1`'s `sent` line: FlatCache's own
    /// reader decodes it to the fields the document names, and the document's
    /// hex dump is its bytes.
    @Test func theDocumentsOutboxLineDecodesAsTheDocumentSays() throws {
        let document = try String(contentsOf: Self.document, encoding: .utf8)
        let lines = try String(contentsOf: GoldenFolder.url("outbox").appendingPathComponent("outbox.lines"), encoding: .utf8)
            .split(separator: "\n").map(String.init)
        try #require(lines.count == 11)
        let line = lines[4]
        let shown = document.contains("\n```\n" + line + "\n```\n")
        #expect(shown, "docs/format.md does not show line 5 on its own")
        let bytes = try #require(Data(base64Encoded: line))
        let record = try OutboxRecord<ChatMessage>(serializedData: bytes)
        #expect(record.requestID == "trip-1")
        #expect(record.channelURL == "trip")
        #expect(record.queuedAt == 1_700_000_000_000)
        #expect(record.kind == .sent)
        #expect(record.attempts == 1)
        #expect(record.reason == "")
        #expect(record.message == ChatMessage(
            messageID: 0, channelURL: "trip", createdAt: 1_700_000_000_000, sender: Self.ana, text: "Hi 👋"))
        #expect(record.serverMessage == Self.tripOneOnTheServer)
        #expect(try record.serialize() == bytes)
        let dumped = document.contains("\n```\n" + Self.hexDump(bytes) + "```\n")
        #expect(dumped, "docs/format.md lacks the hex dump:\n\(Self.hexDump(bytes))")
        // The server's copy is a ChatMessage of version 2: version 1's bytes with the version byte 2, then the request id.
        let copy = try Self.tripOneOnTheServer.serialize()
        var withoutRequestID = Self.tripOneOnTheServer
        withoutRequestID.requestID = nil
        let versionOne = try withoutRequestID.serialize()
        #expect(copy.first == 2 && versionOne.first == 1)
        #expect(copy.dropFirst() == versionOne.dropFirst() + Data([6]) + Data("trip-1".utf8))
    }

    /// Bytes as `xxd` prints them: 16 a line, offset, hex in pairs, then the printable ASCII.
    static func hexDump(_ bytes: Data) -> String {
        let all = Array(bytes)
        var text = ""
        for offset in stride(from: 0, to: all.count, by: 16) {
            let chunk = all[offset..<min(offset + 16, all.count)]
            var hex = ""
            for (index, byte) in chunk.enumerated() {
                hex += String(format: "%02x", byte) + (index % 2 == 1 && index < 15 ? " " : "")
            }
            hex = hex.padding(toLength: 40, withPad: " ", startingAt: 0)
            let ascii = String(chunk.map { (0x20...0x7E).contains($0) ? Character(UnicodeScalar($0)) : "." })
            text += String(format: "%08x: ", offset) + hex + " " + ascii + "\n"
        }
        return text
    }
}
