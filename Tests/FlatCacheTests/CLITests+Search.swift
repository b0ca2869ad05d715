import FlatCache
import Foundation
import Testing

/// `flatcache search` (issue 34), run as a program on real folders: hits
/// with their words marked, the channel and sender filters, `--limit`,
/// `--newest-first`, the `--json` shape and its UTF-8 offsets, usage and
/// folder errors; on an encrypted folder with and without its key; on a
/// damaged folder and on one it may only read, which it never changes.
extension CLITests {
    /// The `--json` document of `flatcache search cache arguments...`.
    func searchJSON(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
        let run = try flatcache(["search", "cache"] + arguments + ["--json"])
        try #require(run.status == 0, "\(run.stderr)", sourceLocation: sourceLocation)
        return try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
    }

    func hits(_ document: [String: Any]) throws -> [[String: Any]] {
        try #require(document["hits"] as? [[String: Any]])
    }

    @Test func searchShowsOneHitPerLineWithItsWordsMarked() throws {
        try expectGolden("search", ["search", "cache", "trail"])
        let run = try flatcache(["search", "cache", "trail"])
        let lines = run.stdout.split(separator: "\n")
        // The sample's trail message in 4 channels (channel, time, sender, text), then the count.
        #expect(lines.count == 5, "\(run.stdout)")
        #expect(lines.first == "sendbird_group_channel_tokyo   2025-11-25 13:55:02 UTC  mina   Here's the [trail]: 12 km, 600 m up ⛰️")
        for line in lines.dropLast() {
            #expect(line.hasPrefix("sendbird_group_channel_"), "\(line)")
            #expect(line.hasSuffix("  Here's the [trail]: 12 km, 600 m up ⛰️"), "\(line)")
        }
        #expect(lines.last == "4 hits, no more.")
        #expect(run.status == 0 && run.stderr.isEmpty, "\(run.stderr)")
    }

    @Test func searchFindsAccentsAndPrefixesAndSaysWhenNothingMatches() throws {
        let prefix = try flatcache(["search", "cache", "ca marc", "--limit", "1"])
        #expect(prefix.stdout.contains("  [Ça] [marche], à demain !"), "\(prefix.stdout)")
        #expect(prefix.stdout.hasSuffix("1 hit shown; more match (raise --limit to see them).\n"))
        let none = try flatcache(["search", "cache", "zanzibar"])
        #expect(none.status == 0)
        #expect(none.stdout == "No cached message matches \"zanzibar\".\n")
    }

    @Test func searchKeepsToTheChannelsAndSendersGiven() throws {
        let everywhere = Set(try hits(searchJSON(["photo", "--limit", "500"])).compactMap { $0["channelURL"] as? String })
        #expect(everywhere.count > 1, "the sample has photos in several channels: \(everywhere)")

        let channels = ["sendbird_group_channel_family", "sendbird_group_channel_hiking"]
        let inTwo = try hits(searchJSON(["photo", "--limit", "500"] + channels.flatMap { ["--channel", $0] }))
        #expect(!inTwo.isEmpty)
        #expect(Set(inTwo.compactMap { $0["channelURL"] as? String }).isSubset(of: Set(channels)))

        let fromOleg = try hits(searchJSON(["photo", "--limit", "500", "--sender", "oleg"]))
        #expect(fromOleg.count == 3)
        #expect(fromOleg.allSatisfy { $0["senderID"] as? String == "oleg" })
        let text = try flatcache(["search", "cache", "photo", "--limit", "500", "--sender", "oleg", "--sender", "mina"])
        let lines = text.stdout.split(separator: "\n")
        #expect(lines.last == "8 hits, no more.")
        for line in lines.dropLast() {
            #expect(line.contains("  oleg  ") || line.contains("  mina  "), "\(line)")
        }
        #expect(try hits(searchJSON(["photo", "--channel", "no-such-channel"])).isEmpty)
    }

    @Test func searchLimitNewestFirstAndMore() throws {
        let two = try searchJSON(["photo", "--limit", "2"])
        #expect(try hits(two).count == 2)
        #expect(two["more"] as? Bool == true)
        let all = try searchJSON(["photo", "--limit", "500"])
        #expect(all["more"] as? Bool == false)
        let newest = try hits(searchJSON(["photo", "--limit", "500", "--newest-first"])).compactMap { $0["createdAt"] as? Int64 }
        #expect(newest.count == (try hits(all)).count)
        #expect(newest == newest.sorted(by: >))
    }

    @Test func searchJSONHasOneShapeAndUTF8Offsets() throws {
        try expectGolden("search-json", ["search", "cache", "ca marc", "--limit", "2", "--json"])
        let document = try searchJSON(["ca marc", "--limit", "2"])
        #expect(Set(document.keys) == ["query", "hits", "more"])
        #expect(document["query"] as? String == "ca marc")
        let hit = try #require(try hits(document).first)
        #expect(Set(hit.keys) == ["channelURL", "messageID", "createdAt", "senderID", "text", "highlights"])
        let text = try #require(hit["text"] as? String)
        #expect(text == "Ça marche, à demain !")
        let highlights = try #require(hit["highlights"] as? [[String: Any]])
        // "Ç" is two bytes in UTF-8: "Ça" is bytes 0..<3 and "marche" 4..<10.
        #expect(highlights.map { $0["utf8Start"] as? Int } == [0, 4])
        #expect(highlights.map { $0["utf8End"] as? Int } == [3, 10])
        for highlight in highlights {
            let (start, end) = (try #require(highlight["utf8Start"] as? Int), try #require(highlight["utf8End"] as? Int))
            #expect(String(decoding: Array(text.utf8)[start..<end], as: UTF8.self) == highlight["text"] as? String)
        }
        // Keys sorted, so that the same search prints the same bytes.
        let raw = try flatcache(["search", "cache", "ca marc", "--limit", "1", "--json"]).stdout
        #expect(raw.range(of: "\"channelURL\"")!.lowerBound < raw.range(of: "\"createdAt\"")!.lowerBound)
        #expect(raw.range(of: "\"hits\"")!.lowerBound < raw.range(of: "\"more\"")!.lowerBound)
    }

    @Test func searchWithNoWordsOrABadFolderIsOneClearError() throws {
        try expectGolden("search-empty-query", ["search", "cache", "  "])
        let empty = try flatcache(["search", "cache", ""])
        #expect(empty.status == 2 && empty.stderr.hasPrefix("Error: Please give words to search for.\n"), "\(empty.stderr)")
        let limit = try flatcache(["search", "cache", "trail", "--limit", "0"])
        #expect(limit.status == 2 && limit.stderr.hasPrefix("Error: Please give --limit a number of 1 or more.\n"))

        try FileManager.default.createDirectory(at: folder.appending("plain"), withIntermediateDirectories: false)
        let plain = try flatcache(["search", "plain", "trail"])
        #expect(plain.status == 1 && plain.stdout.isEmpty)
        #expect(plain.stderr == "Error: plain is not a FlatCache folder: it has no 'format' file.\n")
        let missing = try flatcache(["search", "nowhere", "trail"])
        #expect(missing.status == 1 && missing.stderr == "Error: nowhere does not exist.\n")

        _ = try CLIReadOnlyTests.saveCustomRecords(in: folder.appending("custom"))
        let custom = try flatcache(["search", "custom", "m"])
        #expect(custom.status == 1 && custom.stderr.contains("search reads the built-in record types only"), "\(custom.stderr)")
    }

    @Test func searchHelpSaysWhatItFindsAndPrints() throws {
        try expectGolden("help-search", ["search", "--help"])
    }
}

extension CLIEncryptionTests {
    @Test func searchOpensAnEncryptedCacheWithItsKeyOnly() async throws {
        try await fill()
        try Self.otherKey.write(to: folder.appending("other.key"))
        let before = try snapshot()

        let keyed = try flatcache(["search", "enc", "whispered", "--key-file", "hex.key", "--newest-first"])
        #expect(keyed.status == 0, "\(keyed.stderr)")
        #expect(keyed.stdout == """
            beta   1970-01-01 00:00:02 UTC  user-1  [Whispered] text two
            alpha  1970-01-01 00:00:01 UTC  user-1  [Whispered] text one
            2 hits, no more.

            """)

        let keyless = try flatcache(["search", "enc", "whispered"])
        #expect(keyless.status == 1 && keyless.stdout.isEmpty)
        #expect(keyless.stderr == "Error: The cache at \(cache.path) is encrypted with key \(Self.keyID): give that key with --key-file <path>.\n")

        let wrong = try flatcache(["search", "enc", "whispered", "--key-file", "other.key"])
        let otherID = Encryption.aes256gcm(key: Self.otherKey).keyID
        #expect(wrong.status == 1 && wrong.stdout.isEmpty)
        #expect(wrong.stderr == "Error: The cache at \(cache.path) is encrypted with key \(Self.keyID), not with the key in the key file (\(otherID)); nothing was read or changed.\n")
        #expect(try snapshot() == before)
    }
}

extension CLIReadOnlyTests {
    @Test func searchOnADamagedCacheReportsTheFileShowsTheRestAndChangesNothing() throws {
        let damaged = try damage()
        let before = try snapshot()

        let run = try ToolRun(["search", "cache", "photo", "--limit", "500", "--json"], in: folder.url)

        #expect(run.status == 1)
        #expect(run.stderr.contains("Damaged: \(damaged[0])"), "\(run.stderr)")
        #expect(!run.stderr.contains(damaged[1]), "search reads no users file: \(run.stderr)")
        #expect(run.stdout.contains("sendbird_group_channel_hiking") && !run.stdout.contains(Self.channel), "\(run.stdout)")
        #expect(try GoldenFolder.differences(between: cache, and: before).isEmpty)
    }

    @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")))
    func searchWorksOnAFolderItMayOnlyRead() throws {
        try makeReadableOnly()
        let before = try snapshot()

        let run = try ToolRun(["search", "cache", "trail"], in: folder.url, asNobody: true)

        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.isEmpty, "\(run.stderr)")
        #expect(run.stdout.hasSuffix("4 hits, no more.\n"), "\(run.stdout)")
        #expect(try GoldenFolder.differences(between: cache, and: before).isEmpty)
    }
}
