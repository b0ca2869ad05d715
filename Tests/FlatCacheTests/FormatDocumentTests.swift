import FlatCache
import Foundation
import Testing

/// `docs/format.md` walks through one small cache, file by file. That cache
/// is a golden folder too, and every line of it must appear in the document,
/// so the document can never drift from the bytes FlatCache writes.
@Suite struct FormatDocumentTests {
    let folder: TemporaryFolder

    init() throws {
        folder = try TemporaryFolder()
    }

    static let document = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/format.md")

    /// The worked example: two group channels, one ordered by its creation
    /// time and one by its last message's; three messages kept, one dropped
    /// by the limit and three left out by rule; two users.
    func saveWorkedExample(into directory: URL) throws {
        let cache = try ChatCache(directory: directory, configuration: Configuration(maxMessagesPerChannel: 2))
        let ana = ChatUser(userID: "ana", nickname: "Ana")
        let zoe = ChatUser(userID: "Zoe", nickname: "Zoë", profileURL: "https://example.com/z.png")
        let hello = ChatMessage(messageID: 1, channelURL: "trip", createdAt: 1_700_000_000_000, sender: ana, text: "Hi 👋")
        let reply = ChatMessage(messageID: 2, channelURL: "trip", createdAt: 1_700_000_060_000, sender: ana, text: "東京?")
        // "cafe": three messages for a limit of two; two of them created in the same millisecond.
        let coffee = ChatMessage(messageID: 5, channelURL: "cafe", createdAt: 1_700_000_100_000, sender: zoe, text: "Coffee?")
        let cup = ChatMessage(messageID: 6, channelURL: "cafe", createdAt: 1_700_000_120_000, sender: zoe, text: "☕")
        let joined = ChatMessage(messageID: 7, channelURL: "cafe", createdAt: 1_700_000_120_000, text: "", customType: "join")
        // Never stored: an unsent message (id 0), an open channel and its message.
        let unsent = ChatMessage(messageID: 0, channelURL: "trip", createdAt: 1_700_000_090_000, sender: ana, text: "…")
        let lobby = ChatChannel(channelURL: "lobby", kind: .open, name: "Lobby", memberCount: 0, createdAt: 1_690_000_000_000)
        let shout = ChatMessage(
            messageID: 9, channelURL: "lobby", channelKind: .open, createdAt: 1_700_000_200_000, sender: zoe, text: "Hey")
        try cache.channels.blocking.save([
            ChatChannel(channelURL: "trip", kind: .group, name: "Trip", memberCount: 2, createdAt: 1_699_000_000_000),
            ChatChannel(
                channelURL: "cafe", kind: .group, name: "Café", memberCount: 0, createdAt: 1_600_000_000_000,
                lastMessage: joined),
            lobby,
        ])
        try cache.messages.blocking.save([reply, hello, joined, coffee, unsent, cup, shout])
        try cache.users.blocking.save([ana, zoe])
    }

    @Test func theWorkedExampleIsPinnedByAGolden() throws {
        try saveWorkedExample(into: folder.url)
        try GoldenFolder.assertMatches(folder.url, golden: "worked-example")
    }

    @Test func theWorkedExampleLeavesOutWhatTheRulesSay() throws {
        try saveWorkedExample(into: folder.url)
        let cache = try ChatCache(directory: folder.url)
        #expect(try cache.channels.blocking.load().map(\.channelURL) == ["cafe", "trip"])
        #expect(try cache.messages.blocking.load(in: "trip").map(\.messageID) == [1, 2])
        #expect(try cache.messages.blocking.load(in: "cafe").map(\.messageID) == [6, 7])
        #expect(try cache.messages.blocking.load(in: "lobby").isEmpty)
        #expect(try cache.users.blocking.load().map(\.userID) == ["Zoe", "ana"])
    }

    /// The JSON record form as `docs/format.md` shows it: what `JSONCacheRecord` writes, escapes included.
    struct Note: JSONCacheRecord, Equatable {
        var text: String
        var link: String
        var tag: String?
        var id: Int64
    }

    @Test func theJSONRecordExampleIsWhatJSONCacheRecordWrites() throws {
        let note = Note(text: "Tab\t\"q\" \\ é\u{1}👋", link: "https://example.com/a/b", tag: nil, id: -1)
        let bytes = try note.serialize()
        let document = try String(contentsOf: Self.document, encoding: .utf8)
        let line = String(decoding: bytes, as: UTF8.self)
        #expect(document.contains(line), "docs/format.md lacks the JSON record line \(line)")
        #expect(try Note(serializedData: bytes) == note)
    }

    @Test func everyLineOfTheWorkedExampleIsInTheFormatDocument() throws {
        let document = try String(contentsOf: Self.document, encoding: .utf8)
        let golden = GoldenFolder.url("worked-example")
        for path in try GoldenFolder.files(in: golden).sorted() {
            #expect(document.contains(path), "docs/format.md does not name \(path)")
            let text = try String(contentsOf: golden.appendingPathComponent(path), encoding: .utf8)
            for line in text.split(separator: "\n") {
                #expect(document.contains(line), "docs/format.md lacks this line of \(path): \(line)")
            }
        }
    }
}
