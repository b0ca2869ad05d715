@testable import FlatCache
import Foundation
import Testing

/// A format-1 folder (the goldens as format 1 wrote them, kept in
/// `GoldenV1/`) opens and reads as it is, and becomes format 2 at its first
/// write of records: the marker rewritten in place, nothing else touched.
@Suite struct FormatUpgradeTests {
    typealias Cache = ChatCache<ChatMessage, ChatChannel, ChatUser>
    let folder: TemporaryFolder

    init() throws {
        folder = try TemporaryFolder()
    }

    /// `Tests/FlatCacheTests/GoldenV1/<name>`.
    static func v1(_ name: String) -> URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("GoldenV1/" + name)
    }

    func copyOfV1(_ name: String) throws -> URL {
        let copy = folder.appending(name)
        try FileManager.default.copyItem(at: Self.v1(name), to: copy)
        return copy
    }

    func marker(_ root: URL) throws -> String {
        try String(contentsOf: root.appendingPathComponent("format"), encoding: .utf8)
    }

    @Test(arguments: ["sample-cache", "worked-example", "every-file", "continuity", "appended-within-slack"])
    func aV1GoldenReadsAsItsV2GoldenAndDiffersOnlyInItsMarker(name: String) throws {
        // Every format-1 file is a format-2 file: only the marker differs
        let differences = try GoldenFolder.differences(between: Self.v1(name), and: GoldenFolder.url(name))
        #expect(differences == ["format: differs at byte 10"] || differences.allSatisfy { $0.hasPrefix("format") })
        #expect(try marker(Self.v1(name)) == "flatcache 1\n")
        // and a cache opened on it reads what the format-2 golden reads, and leaves the marker alone
        let v1 = try copyOfV1(name)
        let old = try Cache(directory: v1)
        let new = try Cache(directory: GoldenFolder.url(name), configuration: Configuration(readOnly: true))
        #expect(try old.channels.load() == new.channels.load())
        #expect(try old.users.load() == new.users.load())
        #expect(try old.messages.loadAll() == new.messages.loadAll())
        #expect(try old.verify().allSatisfy(\.isValid))
        #expect(try marker(v1) == "flatcache 1\n")
    }

    @Test func theFirstWriteMarksTheFolderFormat2InPlace() throws {
        // Given a format-1 folder
        let v1 = try copyOfV1("sample-cache")
        let inode = try GoldenTests.inode(v1.appendingPathComponent("format"))
        let cache = try Cache(directory: v1)
        _ = try cache.messages.loadAll()
        #expect(try marker(v1) == "flatcache 1\n")

        // When a change log is written to it
        let some = try #require(try cache.messages.loadAll().first)
        var edited = some
        edited.text = "edited"
        try cache.messages.applyChangeLog(updated: [edited], deletedMessageIDs: [], in: some.channelURL)

        // Then the marker says 2, in the same file (every instance locks on it), and the edit reads back
        #expect(try marker(v1) == "flatcache 2\n")
        #expect(try GoldenTests.inode(v1.appendingPathComponent("format")) == inode)
        #expect(try Cache(directory: v1).messages.load(in: some.channelURL).contains(edited))
    }

    @Test func aReadOnlyCacheReadsAV1FolderAndChangesNothing() throws {
        let v1 = try copyOfV1("every-file")
        let cache = try Cache(directory: v1, configuration: Configuration(readOnly: true))
        #expect(try !cache.messages.loadAll().isEmpty)
        #expect(try GoldenFolder.differences(between: v1, and: Self.v1("every-file")).isEmpty)
    }
}
