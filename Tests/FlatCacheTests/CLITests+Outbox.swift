import FlatCache
import Foundation
import Testing

/// `flatcache outbox` and the outbox in `info` and `verify`, on a copy of the
/// golden folder `outbox` (see `FormatDocumentTests+Outbox.swift`): entries in queue order
/// per channel, text and `--json`; an empty outbox; a damaged outbox file,
/// reported and left in place (exit status 1), then moved aside by
/// `verify --repair`.
extension CLITests {
    /// A copy of the golden outbox folder at `outbox-cache`.
    func copyOutboxGolden() throws {
        try FileManager.default.copyItem(at: GoldenFolder.url("outbox"), to: folder.appending("outbox-cache"))
    }

    func damageTheOutbox() throws {
        let file = folder.appending("outbox-cache/outbox.lines")
        var bytes = try Data(contentsOf: file)
        bytes[20] ^= 1
        try bytes.write(to: file)
    }

    @Test func outboxListsEntriesInQueueOrderPerChannel() throws {
        try copyOutboxGolden()
        try expectGolden("outbox", ["outbox", "outbox-cache"])
        try expectGolden("outbox-json", ["outbox", "outbox-cache", "--json"])
        try expectGolden("info-outbox", ["info", "outbox-cache"])
        try expectGolden("verify-outbox", ["verify", "outbox-cache"])
        #expect(try GoldenFolder.differences(between: folder.appending("outbox-cache"), and: GoldenFolder.url("outbox")).isEmpty)
    }

    @Test func outboxOfACacheWithNoneSaysSo() throws {
        try expectGolden("outbox-empty", ["outbox", "cache"])
        try expectGolden("outbox-empty-json", ["outbox", "cache", "--json"])
    }

    @Test func outboxOfAMissingFolderOrADamagedFileFailsWithOneClearLine() throws {
        try expectGolden("outbox-missing-folder", ["outbox", "nowhere"])
        try copyOutboxGolden()
        try damageTheOutbox()
        let before = try Data(contentsOf: folder.appending("outbox-cache/outbox.lines"))
        try expectGolden("outbox-damaged", ["outbox", "outbox-cache"])
        #expect(try Data(contentsOf: folder.appending("outbox-cache/outbox.lines")) == before)
        try expectGolden("verify-outbox-damaged", ["verify", "outbox-cache"])
        try expectGolden("verify-outbox-repair", ["verify", "outbox-cache", "--repair"])
        #expect(!FileManager.default.fileExists(atPath: folder.appending("outbox-cache/outbox.lines").path))
        try expectGolden("outbox-after-repair", ["outbox", "outbox-cache"])
    }

    @Test func outboxHelpSaysWhatItShows() throws {
        try expectGolden("help-outbox", ["outbox", "--help"])
    }
}
