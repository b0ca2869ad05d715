import FlatCache
import Foundation
import Testing

/// The `flatcache` tool, run as a separate program on copies of the golden
/// cache: every subcommand, success and failure, text and `--json`. Each run's
/// standard output, standard error and exit status are compared with the
/// golden folder `Golden/cli/<case>` (re-record with `FLATCACHE_RECORD_GOLDENS=1`).
@Suite struct CLITests {
    let folder: TemporaryFolder

    init() throws {
        folder = try TemporaryFolder()
        try FileManager.default.copyItem(at: GoldenFolder.url("sample-cache"), to: folder.appending("cache"))
    }

    /// Runs `flatcache arguments...` in the temporary folder (so paths in output are relative).
    func flatcache(_ arguments: [String], input: Data? = nil) throws -> ToolRun {
        try ToolRun(arguments, in: folder.url, input: input)
    }

    /// Runs the tool and compares the run with the golden `cli/<name>`.
    func expectGolden(
        _ name: String, _ arguments: [String], input: Data? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let run = try flatcache(arguments, input: input)
        let result = folder.appending("results/\(name)")
        try FileManager.default.createDirectory(at: result, withIntermediateDirectories: true)
        for (file, text) in [("stdout", run.stdout), ("stderr", run.stderr), ("status", "\(run.status)\n")] {
            let normal = text.replacingOccurrences(of: folder.url.path, with: "<folder>")
                .replacingOccurrences(of: #"quarantine/[0-9]+-[0-9a-f]+"#, with: "quarantine/<incident>", options: .regularExpression)
            try Data(normal.utf8).write(to: result.appendingPathComponent(file))
        }
        try GoldenFolder.assertMatches(result, golden: "cli/\(name)", sourceLocation: sourceLocation)
    }

    func damageOneMessageFile() throws {
        let messages = folder.appending("cache/messages")
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: messages.path).sorted().first { $0.hasSuffix(".lines") })
        var bytes = try Data(contentsOf: messages.appendingPathComponent(name))
        bytes[20] ^= 1
        try bytes.write(to: messages.appendingPathComponent(name))
    }

    @Test func info() throws {
        try expectGolden("info", ["info", "cache"])
        try expectGolden("info-json", ["info", "cache", "--json"])
    }

    @Test func verifyAHealthyCache() throws {
        try expectGolden("verify", ["verify", "cache"])
        try expectGolden("verify-json", ["verify", "cache", "--json"])
    }

    @Test func verifyABadFileThenRepairIt() throws {
        try damageOneMessageFile()
        try expectGolden("verify-bad", ["verify", "cache"])
        try expectGolden("verify-bad-json", ["verify", "cache", "--json"])
        try expectGolden("verify-repair", ["verify", "cache", "--repair"])
        try expectGolden("verify-after-repair", ["verify", "cache"])
        // The file moved aside counts in info's quarantined bytes, as in the library's statistics.
        try expectGolden("info-after-repair", ["info", "cache", "--json"])
        let statistics = try ChatCache(directory: folder.appending("cache"), configuration: Configuration(readOnly: true)).blocking.statistics()
        #expect(statistics.quarantinedBytes > 0)
        #expect(try flatcache(["info", "cache", "--json"]).stdout.contains("\"quarantinedBytes\" : \(statistics.quarantinedBytes),"))
    }

    @Test func channels() throws {
        try expectGolden("channels", ["channels", "cache"])
        try expectGolden("channels-json", ["channels", "cache", "--json"])
    }

    @Test func messages() throws {
        try expectGolden("messages", ["messages", "cache", "sendbird_group_channel_tokyo", "--limit", "5"])
        try expectGolden("messages-before", ["messages", "cache", "sendbird_group_channel_books", "--before", "1764000000000", "--limit", "3"])
        try expectGolden("messages-after", ["messages", "cache", "sendbird_group_channel_books", "--after", "1764000000000", "--limit", "2"])
        try expectGolden("messages-json", ["messages", "cache", "sendbird_group_channel_family", "--limit", "2", "--json"])
        try expectGolden("messages-unknown-channel", ["messages", "cache", "no-such-channel"])
        try expectGolden("messages-usage", ["messages", "cache", "sendbird_group_channel_books", "--before", "1", "--after", "2"])
    }

    @Test func users() throws {
        try expectGolden("users", ["users", "cache"])
        try expectGolden("users-json", ["users", "cache", "--json"])
    }

    @Test func export() throws {
        try expectGolden("export", ["export", "cache"])
    }

    @Test func importReportsABadLineByNumberAndWritesNothing() throws {
        let lines = try flatcache(["export", "cache"]).stdout.split(separator: "\n").prefix(2).joined(separator: "\n")
        let input = Data((lines + "\n{\"kind\":\"message\",\"text\":\"no id\"}\n").utf8)
        try expectGolden("import-bad-line", ["import", "new-cache"], input: input)
        try expectGolden("import-not-json", ["import", "new-cache"], input: Data("not json\n".utf8))
        #expect(!FileManager.default.fileExists(atPath: folder.appending("new-cache").path))
    }

    @Test func exportThenImportReproducesTheCacheByteForByte() throws {
        let exported = try flatcache(["export", "cache"])
        #expect(exported.status == 0)
        try expectGolden("import-json", ["import", "copy", "--json"], input: Data(exported.stdout.utf8))
        #expect(try GoldenFolder.differences(between: folder.appending("copy"), and: GoldenFolder.url("sample-cache")).isEmpty)
    }

    @Test func importFromAFileIntoAnExistingCacheUpdatesIt() throws {
        let line = #"{"channelKind":"group","channelURL":"sendbird_group_channel_books","createdAt":1764999999999,"customType":"","data":"","kind":"message","messageID":9999999,"text":"imported","updatedAt":0}"#
        try Data((line + "\n").utf8).write(to: folder.appending("one.jsonl"))
        try expectGolden("import-file", ["import", "cache", "--file", "one.jsonl"])
        let cache = try ChatCache(directory: folder.appending("cache"))
        #expect(try cache.messages.blocking.load(in: "sendbird_group_channel_books").last?.text == "imported")
    }

    @Test func badFoldersGetOneClearLine() throws {
        try FileManager.default.createDirectory(at: folder.appending("plain"), withIntermediateDirectories: false)
        try expectGolden("not-a-cache", ["info", "plain"])
        try expectGolden("missing-folder", ["channels", "nowhere"])
        try Data("flatcache 3\n".utf8).write(to: folder.appending("cache/format"))
        try expectGolden("newer-format", ["users", "cache"])
    }

    @Test func helpAndVersion() throws {
        try expectGolden("help", ["--help"])
        try expectGolden("version", ["--version"])
        try expectGolden("help-messages", ["messages", "--help"])
        try expectGolden("usage-unknown-subcommand", ["frobnicate"])
    }
}
