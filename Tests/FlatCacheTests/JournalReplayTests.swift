@testable import FlatCache
import Foundation
import Testing

/// The journal's replay against what a review found (issue 33): a stale
/// entry must never write over what a later flush wrote, nor apply to a new
/// file that was given a freed inode's number; a save naming one message
/// twice reads the same from memory and from disk; a file the journal names
/// that is now damaged does not stop the cache from opening.
@Suite(.serialized) struct JournalReplayTests {
    typealias Cache = ChatCache<ChatMessage, ChatChannel, ChatUser>

    static func edited(_ id: Int64, _ text: String) -> ChatMessage {
        var message = Fixtures.message(id, at: id * 1_000, text: text)
        message.updatedAt = 9_000
        return message
    }

    /// Process A appended X and wrote its journal entry, then died before its sidecar write.
    /// Process B (already open) reads (cuts X off), then flushes its own edit Y (journaled).
    /// A third open replays the journal: Y must survive.
    @Test func aStaleEntryNeverWritesOverALaterFlushedAppend() throws {
        let folder = try TemporaryFolder()
        let url = Fixtures.channelURL
        var configuration = Configuration(durability: .synchronized)
        configuration.memoryLimit = 0
        let b = try Cache(directory: folder.url, configuration: configuration)
        try b.messages.replace(Fixtures.messages(3), in: url)
        let dataFile = GoldenTests.messageFile(in: folder.url)
        let root = try FileSystem.canonicalPath(of: folder.url.path)

        // Process A's flush, cut between the journal's fsync and the sidecar.
        let before = try Data(contentsOf: dataFile)
        let line = try RecordLines.encode([AppendedLine(kind: .upsert, record: Self.edited(2, "A's edit, never confirmed").serialize())], sealer: nil, fileName: dataFile.lastPathComponent)
        let handle = try FileHandle(forWritingTo: dataFile)
        try handle.seekToEnd()
        try handle.write(contentsOf: line)
        try handle.close()
        try Journal(root: root).record([Journal.Append(
            file: "messages/" + dataFile.lastPathComponent, inode: try GoldenTests.inode(dataFile),
            generation: FileSystem.generation(at: dataFile.path), offset: before.count,
            before: SHA256Digest(of: before), bytes: line, after: SHA256Digest(of: before + line))])

        // Process B reads the channel (the unfinished append is cut off), then flushes its own edit.
        #expect(try b.messages.load(in: url) == Fixtures.messages(3))
        try b.messages.applyChangeLog(updated: [Self.edited(3, "B's edit, flushed")], deletedMessageIDs: [], in: url)
        _ = try b.blocking.flush()

        // Another process opens the folder (B still running, never closed).
        let c = try Cache(directory: folder.url, configuration: configuration)
        let after = try c.messages.load(in: url).map(\.text)
        #expect(after.contains("B's edit, flushed"))
        #expect(!after.contains("A's edit, never confirmed"))
    }

    /// One save naming a message twice, with two createdAt: the last given wins in memory; the appended lines?
    @Test func aSaveNamingOneMessageTwiceReadsTheSameFromDisk() throws {
        let folder = try TemporaryFolder()
        let url = Fixtures.channelURL
        let cache = try Cache(directory: folder.url)
        try cache.messages.replace(Fixtures.messages(3), in: url)
        _ = try cache.messages.save([
            Fixtures.message(2, at: 2_500, text: "first given"), Fixtures.message(2, at: 1_500, text: "last given"),
        ])
        let inMemory = try cache.messages.load(in: url).map(\.text)
        let other = try Cache(directory: folder.url)
        let onDisk = try other.messages.load(in: url).map(\.text)
        #expect(inMemory == onDisk)
    }

    /// A stale journal entry whose inode number came back (ext4 reuses freed inodes) and whose prefix is the same.
    @Test func aStaleEntryDoesNotApplyToANewFileWithAFreedInodesNumber() throws {
        let folder = try TemporaryFolder()
        let url = Fixtures.channelURL
        let cache = try Cache(directory: folder.url, configuration: Configuration(durability: .synchronized))
        let dataFile = GoldenTests.messageFile(in: folder.url)
        try cache.messages.replace(Fixtures.messages(4), in: url)
        try cache.messages.replace(Fixtures.messages(3), in: url)
        try cache.messages.replace(Fixtures.messages(4), in: url)
        try cache.messages.replace(Fixtures.messages(3), in: url)
        let first = try GoldenTests.inode(dataFile)
        try cache.messages.applyChangeLog(updated: [], deletedMessageIDs: [3], in: url)
        // Rewrites that bring the file's first inode number back (ext4 gives a freed inode's number to the next file)
        var reused = false
        for round in 0..<6 {
            try cache.messages.replace(round % 2 == 0 ? Fixtures.messages(4) : Fixtures.messages(3), in: url)
            if try GoldenTests.inode(dataFile) == first, round % 2 == 1 { reused = true }
        }
        withKnownIssue("this file system did not give the inode's number again", isIntermittent: true) { #expect(reused) }
        // The process is killed here (no close): the next open replays.
        let next = try Cache(directory: folder.url, configuration: Configuration(durability: .synchronized))
        let ids = try next.messages.load(in: url).map(\.messageID)
        #expect(ids == [1, 2, 3])
    }

    /// A journal naming a file that is now a folder (damage the spec says a read moves aside).
    @Test func aJournaledFileNowAFolderDoesNotStopTheOpen() throws {
        let folder = try TemporaryFolder()
        let url = Fixtures.channelURL
        let cache = try Cache(directory: folder.url, configuration: Configuration(durability: .synchronized))
        let dataFile = GoldenTests.messageFile(in: folder.url)
        try cache.messages.replace(Fixtures.messages(3), in: url)
        try cache.messages.applyChangeLog(updated: [], deletedMessageIDs: [3], in: url)
        try FileManager.default.removeItem(at: dataFile)
        try FileManager.default.createDirectory(at: dataFile, withIntermediateDirectories: false)
        do {
            let next = try Cache(directory: folder.url, configuration: Configuration(durability: .synchronized))
            #expect(try next.messages.load(in: url) == [])
        } catch {
            Issue.record("open failed: \(error)")
        }
    }
}
