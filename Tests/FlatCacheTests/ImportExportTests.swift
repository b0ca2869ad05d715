import FlatCache
import Foundation
import Testing

/// `flatcache export` and `flatcache import` (issue 9, point 6): import checks
/// everything before it writes, reads CRLF and blank lines, keeps
/// `--max-messages`, says what it left out, and an export imported into an
/// empty folder reproduces any folder the library wrote, empty files included.
extension CLITests {
    /// Opens (creating) a cache under the temporary folder, as an app would.
    func libraryCache(_ name: String, maxMessages: Int = Configuration.defaultMaxMessagesPerChannel) throws
        -> ChatCache<ChatMessage, ChatChannel, ChatUser>
    {
        try ChatCache(directory: folder.appending(name), configuration: Configuration(maxMessagesPerChannel: maxMessages))
    }

    /// Exports `source`, imports the export into the new folder `target`, and returns both runs.
    func exportThenImport(_ source: String, into target: String, _ options: [String] = []) throws -> (ToolRun, ToolRun) {
        let exported = try flatcache(["export", source])
        #expect(exported.status == 0)
        return (exported, try flatcache(["import", target] + options, input: Data(exported.stdout.utf8)))
    }

    /// The differences between two folders under the temporary folder, byte for byte.
    func differences(_ actual: String, _ expected: String) throws -> [String] {
        try GoldenFolder.differences(between: folder.appending(actual), and: folder.appending(expected))
    }

    @Test func aBadLineAtTheEndWritesNothingNotEvenTheFolder() throws {
        // Given good lines (a new channel and user) and, last, a message the library would refuse at save time
        let input = Data(
            (#"{"channelKind":"group","channelURL":"new","coverURL":"","createdAt":1,"kind":"channel","memberCount":1,"name":"New"}"#
                + "\n" + #"{"kind":"user","nickname":"Zoe","profileURL":"","userID":"zoe"}"#
                + "\n" + #"{"channelKind":"group","channelURL":"","createdAt":2,"customType":"","data":"","kind":"message","messageID":7,"text":"x","updatedAt":0}"#
                + "\n").utf8)
        // When it goes into a new folder, then into an existing cache
        try expectGolden("import-empty-channel-url", ["import", "new-cache"], input: input)
        try expectGolden("import-empty-channel-url-existing", ["import", "cache"], input: input)
        // Then neither the new folder nor any byte of the existing cache was written
        #expect(!FileManager.default.fileExists(atPath: folder.appending("new-cache").path))
        #expect(try GoldenFolder.differences(between: folder.appending("cache"), and: GoldenFolder.url("sample-cache")).isEmpty)
    }

    @Test func anEmptyUserIDIsRefusedByLineNumber() throws {
        let input = Data("\n\n{\"kind\":\"user\",\"nickname\":\"Nobody\",\"profileURL\":\"\",\"userID\":\"\"}\n".utf8)
        try expectGolden("import-empty-user-id", ["import", "new-cache"], input: input)
        #expect(!FileManager.default.fileExists(atPath: folder.appending("new-cache").path))
    }

    @Test func crlfAndBlankLinesImportFine() throws {
        // Given an export with CRLF line ends, blank lines inside and whitespace-only lines at the end
        let exported = try flatcache(["export", "cache"]).stdout.split(separator: "\n")
        let lines = exported.prefix(3) + ["", "  \t"] + exported.dropFirst(3)
        let input = Data((lines.joined(separator: "\r\n") + "\r\n\r\n \r\n\n").utf8)
        // When it is imported
        let run = try flatcache(["import", "copy"], input: input)
        // Then the copy is the cache, byte for byte
        #expect(run.status == 0)
        #expect(run.stderr.isEmpty)
        #expect(try differences("copy", "cache").isEmpty)
        // And line numbers count blank lines, as an editor shows them
        try expectGolden("import-crlf-line-number", ["import", "other"], input: Data("\r\n\n  \r\nnot json\r\n".utf8))
    }

    @Test func maxMessagesKeepsAChannelOf250AndRoundTripsByteForByte() throws {
        // Given a folder an app wrote with room for 300 messages per channel, one channel holding 250
        let app = try libraryCache("app", maxMessages: 300)
        try app.channels.blocking.replace(with: [Fixtures.channel("big", lastMessageAt: 250_000)])
        try app.messages.blocking.replace(Fixtures.messages(250, in: "big"), in: "big")
        try app.users.blocking.save([Fixtures.mina])
        // When it is exported and imported with --max-messages 300
        let (_, imported) = try exportThenImport("app", into: "copy", ["--max-messages", "300"])
        // Then all 250 are kept, nothing is reported left out, and the copy is identical
        #expect(imported.status == 0)
        #expect(imported.stderr.isEmpty)
        let copy = try ChatCache(directory: folder.appending("copy"), configuration: .init(maxMessagesPerChannel: 300))
        #expect(try copy.messages.blocking.load(in: "big").count == 250)
        #expect(try differences("copy", "app").isEmpty)
    }

    @Test func theDefaultDrops50OlderMessagesAndSaysSo() throws {
        let app = try libraryCache("app", maxMessages: 300)
        try app.messages.blocking.replace(Fixtures.messages(250, in: "big"), in: "big")
        let export = try flatcache(["export", "app"]).stdout
        try expectGolden("import-drops-older-messages", ["import", "copy"], input: Data(export.utf8))
        try expectGolden("import-drops-older-messages-json", ["import", "copy-json", "--json"], input: Data(export.utf8))
        let kept = try ChatCache(directory: folder.appending("copy")).messages.blocking.load(in: "big")
        #expect(kept.count == 200)
        #expect(kept.first?.messageID == 51)
    }

    @Test func maxMessagesBelowOneIsAUsageError() throws {
        try expectGolden("import-max-messages-zero", ["import", "copy", "--max-messages", "0"], input: Data())
        #expect(!FileManager.default.fileExists(atPath: folder.appending("copy").path))
    }

    @Test func importReportsWhatItLeftOutAndWhy() throws {
        let input = Data(
            [
                #"{"channelKind":"open","channelURL":"lobby","coverURL":"","createdAt":1,"kind":"channel","memberCount":9,"name":"Lobby"}"#,
                #"{"channelKind":"open","channelURL":"lobby","createdAt":2,"customType":"","data":"","kind":"message","messageID":5,"text":"hi all","updatedAt":0}"#,
                #"{"channelKind":"group","channelURL":"trip","createdAt":3,"customType":"","data":"","kind":"message","messageID":0,"text":"sending…","updatedAt":0}"#,
                #"{"channelKind":"group","channelURL":"trip","createdAt":4,"customType":"","data":"","kind":"message","messageID":6,"text":"first","updatedAt":0}"#,
                #"{"channelKind":"group","channelURL":"trip","createdAt":4,"customType":"","data":"","kind":"message","messageID":6,"text":"edited","updatedAt":5}"#,
            ].joined(separator: "\n").utf8)
        try expectGolden("import-left-out", ["import", "new-cache"], input: input)
        try expectGolden("import-left-out-json", ["import", "new-cache-json", "--json"], input: input)
        let trip = try ChatCache(directory: folder.appending("new-cache")).messages.blocking.load(in: "trip")
        #expect(trip.map(\.text) == ["edited"])
    }

    @Test func aKindWithoutRecordsGetsNoFile() throws {
        // Given one message and no channels or users
        let line = #"{"channelKind":"group","channelURL":"trip","createdAt":4,"customType":"","data":"","kind":"message","messageID":6,"text":"hi","updatedAt":0}"#
        // When it is imported into a new folder
        let run = try flatcache(["import", "new-cache"], input: Data(line.utf8))
        // Then only the format marker, the record types and one message file (with its sidecar) exist
        #expect(run.status == 0)
        let files = try GoldenFolder.files(in: folder.appending("new-cache"))
        #expect(!files.contains("users.lines") && !files.contains("channels.lines"))
        #expect(files.count == 4)
    }

    @Test func emptyChannelListAndEmptyUsersSurviveExportAndImport() throws {
        // Given a folder with an empty channel list and an empty users file, written by the library
        let app = try libraryCache("app")
        try app.channels.blocking.replace(with: [])
        try app.users.blocking.save([])
        // When it is exported and imported into an empty folder
        try expectGolden("export-empty-files", ["export", "app"])
        let (_, imported) = try exportThenImport("app", into: "copy")
        // Then the copy has the same (empty) files, byte for byte
        #expect(imported.status == 0)
        #expect(imported.stdout == "Imported 0 channels, 0 messages and 0 users (and 2 empty files) into copy.\n")
        #expect(try GoldenFolder.files(in: folder.appending("copy")).contains("users.lines"))
        #expect(try differences("copy", "app").isEmpty)
    }

    @Test func aChannelCachedAsEmptySurvivesExportAndImport() throws {
        // Given two listed channels, one cached as empty, and a message file of an unlisted channel cached as empty
        let app = try libraryCache("app")
        try app.channels.blocking.replace(with: [
            Fixtures.channel("quiet", lastMessageAt: 1_000), Fixtures.channel("busy", lastMessageAt: 2_000),
        ])
        try app.messages.blocking.replace([], in: "quiet")
        try app.messages.blocking.replace(Fixtures.messages(3, in: "busy"), in: "busy")
        try app.messages.blocking.replace([], in: "gone")
        // When it is exported and imported into an empty folder
        try expectGolden("export-empty-message-file", ["export", "app"])
        let (_, imported) = try exportThenImport("app", into: "copy")
        // Then every file is reproduced byte for byte, except the unlisted empty file the export named as left out
        #expect(imported.status == 0)
        let missing = try differences("copy", "app")
        #expect(missing.count == 2)
        #expect(missing.allSatisfy { $0.hasPrefix("missing file messages/") })
        try app.messages.blocking.removeAll(in: "gone")
        #expect(try differences("copy", "app").isEmpty)
    }

    @Test func anEmptyLineNeverEmptiesAnExistingCache() throws {
        // Given the sample cache, and "empty" lines for its channel list, users and a channel with messages
        let input = Data(
            [
                #"{"file":"channels","kind":"empty"}"#, #"{"file":"users","kind":"empty"}"#,
                #"{"channelURL":"sendbird_group_channel_tokyo","file":"messages","kind":"empty"}"#,
            ].joined(separator: "\n").utf8)
        // When they are imported into it
        let run = try flatcache(["import", "cache"], input: input)
        // Then nothing changed: import only adds
        #expect(run.status == 0)
        #expect(try GoldenFolder.differences(between: folder.appending("cache"), and: GoldenFolder.url("sample-cache")).isEmpty)
    }

    @Test func aForeignOrFileTargetFailsBeforeWriting() throws {
        try FileManager.default.createDirectory(at: folder.appending("plain"), withIntermediateDirectories: false)
        try Data("notes\n".utf8).write(to: folder.appending("plain/notes.txt"))
        try Data("a file\n".utf8).write(to: folder.appending("file.txt"))
        let line = Data(#"{"kind":"user","nickname":"Zoe","profileURL":"","userID":"zoe"}"#.utf8)
        try expectGolden("import-foreign-folder", ["import", "plain"], input: line)
        try expectGolden("import-into-a-file", ["import", "file.txt"], input: line)
        #expect(try GoldenFolder.files(in: folder.appending("plain")) == ["notes.txt"])
        #expect(try Data(contentsOf: folder.appending("file.txt")) == Data("a file\n".utf8))
    }

    @Test func importAndExportHelp() throws {
        try expectGolden("help-import", ["import", "--help"])
        try expectGolden("help-export", ["export", "--help"])
    }
}
