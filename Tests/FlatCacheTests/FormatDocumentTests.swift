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

    /// The worked example: one group channel with two messages, one user.
    func saveWorkedExample(into directory: URL) throws {
        let cache = try ChatCache(directory: directory)
        let ana = ChatUser(userID: "ana", nickname: "Ana")
        let hello = ChatMessage(messageID: 1, channelURL: "trip", createdAt: 1_700_000_000_000, sender: ana, text: "Hi 👋")
        let reply = ChatMessage(messageID: 2, channelURL: "trip", createdAt: 1_700_000_060_000, sender: ana, text: "東京?")
        try cache.channels.save([ChatChannel(
            channelURL: "trip", kind: .group, name: "Trip", memberCount: 2, createdAt: 1_699_000_000_000)])
        try cache.messages.save([reply, hello])
        try cache.users.save([ana])
    }

    @Test func theWorkedExampleIsPinnedByAGolden() throws {
        try saveWorkedExample(into: folder.url)
        try GoldenFolder.assertMatches(folder.url, golden: "worked-example")
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
