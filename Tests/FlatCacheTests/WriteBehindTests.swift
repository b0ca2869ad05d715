@testable import FlatCache
import Foundation
import Testing

/// Write-behind: `async` saves change memory and return; the files are
/// written later, several changes to one file in one write, and `flush()`
/// waits for them and reports what failed. Writes of new newest messages
/// append to the channel's file; an append a crash cut short is cut off.
@Suite struct WriteBehindTests {
    let folder: TemporaryFolder
    let recorder = LogRecorder()
    let url = Fixtures.channelURL

    init() throws {
        folder = try TemporaryFolder()
    }

    func cache(
        limit: Int = Configuration.defaultMaxMessagesPerChannel, writeDelay: Duration = .seconds(60), readOnly: Bool = false
    ) throws -> ChatCache<ChatMessage, ChatChannel, ChatUser> {
        try ChatCache(
            directory: folder.url,
            configuration: Configuration(
                maxMessagesPerChannel: limit, writeDelay: writeDelay, logger: recorder.logger, readOnly: readOnly))
    }

    /// A fresh instance on the folder, which knows only what is on disk.
    func fresh(limit: Int = Configuration.defaultMaxMessagesPerChannel) throws -> ChatCache<ChatMessage, ChatChannel, ChatUser> {
        try cache(limit: limit)
    }

    /// The data file of channel `channelURL`: `messages/<sha256 of its URL>.lines`.
    func dataFile(_ channelURL: String = Fixtures.channelURL) -> URL {
        folder.appending("messages/" + SHA256Digest(of: Data(channelURL.utf8)).hex + ".lines")
    }

    func sidecar(_ channelURL: String = Fixtures.channelURL) -> URL {
        dataFile(channelURL).appendingPathExtension("sha256")
    }

    /// Inode and size of `file`, by `lstat`.
    func inodeAndSize(_ file: URL) throws -> (inode: UInt64, size: Int) {
        var info = stat()
        guard lstat(file.path, &info) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        return (UInt64(info.st_ino), Int(info.st_size))
    }

    func lineCount(_ file: URL) throws -> Int {
        try Data(contentsOf: file).reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
    }

    /// Whether the sidecar is exactly the `sha256sum` line of the data file as it is on disk.
    func sidecarMatchesData(_ channelURL: String = Fixtures.channelURL) throws -> Bool {
        let data = try Data(contentsOf: dataFile(channelURL))
        let expected = "\(SHA256Digest(of: data).hex)  \(dataFile(channelURL).lastPathComponent)\n"
        return try String(decoding: Data(contentsOf: sidecar(channelURL)), as: UTF8.self) == expected
    }

    func arm(_ operation: FlatCacheError.FileOperation, _ code: POSIXErrorCode, after: Int = 0) {
        FaultInjection.arm(.init(operation: operation, pathPrefix: folder.url.path, code: code, after: after))
    }

    func disarm() {
        FaultInjection.disarm(below: folder.url.path)
    }

    // MARK: - Coalescing and flush

    @Test func fiftySavesToOneChannelAreOneWrite() async throws {
        // Given a cache that writes behind
        let cache = try cache()

        // When 50 messages are saved to one channel, one async save each, then flushed
        for message in Fixtures.messages(50) { try await cache.messages.save([message]) }
        let result = try await cache.flush()

        // Then the flush wrote the file once, with all 50
        #expect(result == SaveResult(filesWritten: 1))
        #expect(try fresh().messages.loadNow(in: url) == Fixtures.messages(50))
        #expect(try lineCount(dataFile()) == 50)
        #expect(try sidecarMatchesData())
    }

    @Test func beforeTheFlushOnlyMemoryHasTheSave() async throws {
        // Given a cache with a long write delay
        let cache = try cache()

        // When messages are saved asynchronously
        try await cache.messages.save(Fixtures.messages(3))

        // Then the file is not written yet, but the same cache loads them
        #expect(!FileManager.default.fileExists(atPath: dataFile().path))
        #expect(try fresh().messages.loadIfCachedNow(in: url) == nil)
        #expect(try await cache.messages.load(in: url) == Fixtures.messages(3))
        #expect(try cache.messages.loadNow(in: url) == Fixtures.messages(3))

        // When the cache is flushed
        #expect(try await cache.flush() == SaveResult(filesWritten: 1))

        // Then another instance sees them, and a second flush has nothing to write
        #expect(try fresh().messages.loadNow(in: url) == Fixtures.messages(3))
        #expect(try await cache.flush() == SaveResult())
    }

    @Test func theWriteHappensAfterTheDelayWithoutAFlush() async throws {
        // Given a cache with a short write delay
        let cache = try cache(writeDelay: .milliseconds(20))

        // When a save returns and the delay passes
        try await cache.messages.save(Fixtures.messages(3))
        var seen = [ChatMessage]()
        for _ in 0..<100 where seen.isEmpty {
            try await Task.sleep(for: .milliseconds(20))
            seen = try fresh().messages.loadNow(in: url)
        }

        // Then the file was written by itself
        #expect(seen == Fixtures.messages(3))
    }

    @Test func withAZeroDelayAnAsyncSaveIsOnDiskWhenItReturns() async throws {
        // Given a write-through cache
        let cache = try cache(writeDelay: .zero)

        // When an async save returns
        try await cache.messages.save(Fixtures.messages(3))

        // Then the file is already there, with nothing left to flush
        #expect(try fresh().messages.loadNow(in: url) == Fixtures.messages(3))
        #expect(try sidecarMatchesData())
        #expect(try await cache.flush() == SaveResult())
    }

    /// Write delays: short, so that background writes happen during the saves; long, so that only the flush writes.
    static let delays: [Duration] = [.milliseconds(5), .seconds(60)]

    @Test(arguments: delays)
    func aFlushAfterSavesFromManyTasksWritesThemAll(writeDelay: Duration) async throws {
        // Given a cache writing behind
        let cache = try cache(writeDelay: writeDelay)

        // When 8 tasks save messages to 3 channels each, and users, one save at a time
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for index in 0..<20 {
                        let id = Int64(worker * 1_000 + index + 1)
                        try await cache.messages.save([Fixtures.message(id, at: id, in: "channel-\(worker % 3)")])
                        if index % 5 == 0 {
                            try await cache.users.save([ChatUser(userID: "user-\(worker)-\(index)", nickname: "\(id)")])
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        try await cache.flush()

        // Then a fresh instance has every message and user
        let fresh = try fresh()
        var total = 0
        for channel in 0..<3 {
            let loaded = try fresh.messages.loadNow(in: "channel-\(channel)")
            let workers = (0..<8).filter { $0 % 3 == channel }
            let expected = Set(workers.flatMap { worker in (0..<20).map { Int64(worker * 1_000 + $0 + 1) } })
            #expect(Set(loaded.map(\.messageID)) == expected)
            total += loaded.count
        }
        #expect(total == 160)
        #expect(try await fresh.users.load().count == 32)
        #expect(recorder.entries.isEmpty)
    }

    // MARK: - Errors after the save returned

    @Test(arguments: zip(
        [FlatCacheError.FileOperation.write, .write, .write, .rename],
        ["append", "edit", "rewrite", "rewrite"]))
    func aWriteThatFailsAfterTheSaveReturnedIsReportedByFlush(operation: FlatCacheError.FileOperation, kind: String) async throws {
        // Given a channel of 3 messages on disk
        let cache = try cache()
        try cache.messages.saveNow(Fixtures.messages(3))
        // and a change to it that appends (a new newest message, an edit's `*` line) or rewrites (a replace)
        var change = Fixtures.message(4, at: 4_000)
        if kind != "append" {
            change = Fixtures.message(2, at: 2_000, text: "edited")
            change.updatedAt = 9_000
        }

        // When the file system fails that write, the save still returns: it only changed memory
        arm(operation, .EIO)
        defer { disarm() }
        if kind == "rewrite" {
            try await cache.messages.replace([Fixtures.message(1, at: 1_000), change, Fixtures.message(3, at: 3_000)], in: url)
        } else {
            try await cache.messages.save([change])
        }
        #expect(try await cache.messages.load(in: url).contains(change))

        // Then flush throws the file system's error
        await #expect {
            try await cache.flush()
        } throws: { error in
            guard case FlatCacheError.fileSystem(let failed, _, let code) = error else { return false }
            return failed == operation && code == .EIO
        }
        disarm()

        // and the memory tier no longer claims the change that did not land
        #expect(try await cache.messages.load(in: url) == Fixtures.messages(3))
        #expect(try cache.messages.loadNow(in: url) == Fixtures.messages(3))
        #expect(try fresh().messages.loadNow(in: url) == Fixtures.messages(3))
        #expect(try await cache.flush() == SaveResult())
        #expect(try sidecarMatchesData())
    }

    @Test func aFailedBackgroundWriteIsLoggedKeptAndReportedByFlush() async throws {
        // Given a channel on disk and a cache writing behind after 10 ms
        let cache = try cache(writeDelay: .milliseconds(10))
        try cache.messages.saveNow(Fixtures.messages(3))

        // When an edit is saved and its background write (an append of its `*` line) fails
        arm(.write, .ENOSPC)
        defer { disarm() }
        var edited = Fixtures.message(2, at: 2_000, text: "edited")
        edited.updatedAt = 9_000
        try await cache.messages.save([edited])
        for _ in 0..<100 where recorder.entries.isEmpty { try await Task.sleep(for: .milliseconds(10)) }

        // Then the failure was logged, and the change stays in memory for the next flush
        #expect(recorder.entries.map(\.level) == [.error])
        #expect(try await cache.messages.load(in: url).map(\.text) == ["message 1", "edited", "message 3"])

        // and that flush, failing again, reports it and drops the change
        await #expect(throws: FlatCacheError.self) { try await cache.flush() }
        disarm()
        #expect(try await cache.messages.load(in: url) == Fixtures.messages(3))
    }

    @Test func anAppendWhoseSidecarWriteFailsLeavesTheOldRecords() async throws {
        // Given a channel of 3 messages on disk
        let cache = try cache()
        try cache.messages.saveNow(Fixtures.messages(3))
        let original = try Data(contentsOf: dataFile())

        // When an append writes its line but its sidecar write fails
        arm(.write, .EIO, after: 1)
        defer { disarm() }
        try await cache.messages.save([Fixtures.message(4, at: 4_000)])
        await #expect(throws: FlatCacheError.self) { try await cache.flush() }
        disarm()
        #expect(try Data(contentsOf: dataFile()).count > original.count)

        // Then the next load returns the old records and cuts the unconfirmed line off
        #expect(try await cache.messages.load(in: url) == Fixtures.messages(3))
        #expect(try Data(contentsOf: dataFile()) == original)
        #expect(try sidecarMatchesData())
    }

    // MARK: - Appends

    @Test func aNewNewestMessageIsAppended() async throws {
        // Given a channel of 3 messages on disk
        let cache = try cache()
        try cache.messages.saveNow(Fixtures.messages(3))
        let before = try inodeAndSize(dataFile())

        // When a newer message is saved (synchronously)
        #expect(try cache.messages.saveNow([Fixtures.message(4, at: 4_000)]) == SaveResult(filesWritten: 1))

        // Then it was appended: the same file, longer, with its sidecar naming the whole of it
        let after = try inodeAndSize(dataFile())
        #expect(after.inode == before.inode)
        #expect(after.size > before.size)
        #expect(try sidecarMatchesData())
        #expect(try fresh().messages.loadNow(in: url) == Fixtures.messages(4))

        // And when three more are saved asynchronously and flushed, they are appended in one write
        for id in Int64(5)...7 { try await cache.messages.save([Fixtures.message(id, at: id * 1_000)]) }
        #expect(try await cache.flush() == SaveResult(filesWritten: 1))
        let flushed = try inodeAndSize(dataFile())
        #expect(flushed.inode == before.inode)
        #expect(flushed.size > after.size)
        #expect(try sidecarMatchesData())
        #expect(try fresh().messages.loadNow(in: url) == Fixtures.messages(7))
    }

    @Test func aMessageThatIsNotTheNewestIsAppendedAsAnUpsertLine() throws {
        // Given a channel of 3 messages on disk
        let cache = try cache()
        try cache.messages.saveNow(Fixtures.messages(3).dropFirst())
        let before = try inodeAndSize(dataFile())

        // When an older message arrives
        try cache.messages.saveNow([Fixtures.message(1, at: 1_000)])

        // Then it was appended as a `*` line (format 2), not rewritten, and reads in order
        let after = try inodeAndSize(dataFile())
        #expect(after.inode == before.inode && after.size > before.size)
        let lines = try String(decoding: Data(contentsOf: dataFile()), as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 3 && lines[2].hasPrefix("*"))
        #expect(try sidecarMatchesData())
        #expect(try fresh().messages.loadNow(in: url) == Fixtures.messages(3))
    }

    @Test func aChannelAtItsLimitAppendsUntilTheSlackIsUsedThenCompacts() async throws {
        // Given a channel at its limit of 8 (slack 8: up to 16 lines)
        let limit = 8
        let slack = MessageStore<ChatMessage>.slack(forLimit: limit)
        #expect(slack == 8)
        let cache = try cache(limit: limit)
        try cache.messages.saveNow(Fixtures.messages(limit))
        let inode = try inodeAndSize(dataFile()).inode

        // When newer messages arrive one at a time, up to limit + slack lines
        for id in Int64(limit + 1)...Int64(limit + slack) {
            try cache.messages.saveNow([Fixtures.message(id, at: id * 1_000)])

            // Then each is appended to the same file, and loads return the newest `limit`
            #expect(try inodeAndSize(dataFile()).inode == inode, "message \(id)")
            #expect(try lineCount(dataFile()) == Int(id))
            #expect(try sidecarMatchesData())
            let newest = Array((id - Int64(limit) + 1)...id)
            #expect(try cache.messages.loadNow(in: url).map(\.messageID) == newest)
            #expect(try await cache.messages.load(in: url).map(\.messageID) == newest)
            #expect(try fresh(limit: limit).messages.loadNow(in: url).map(\.messageID) == newest)
        }

        // When one more arrives
        let next = Int64(limit + slack + 1)
        try cache.messages.saveNow([Fixtures.message(next, at: next * 1_000)])

        // Then the file is compacted to the newest `limit`
        #expect(try inodeAndSize(dataFile()).inode != inode)
        #expect(try lineCount(dataFile()) == limit)
        #expect(try sidecarMatchesData())
        let newest = Array((next - Int64(limit) + 1)...next)
        #expect(try cache.messages.loadNow(in: url).map(\.messageID) == newest)
        #expect(try fresh(limit: limit).messages.loadNow(in: url).map(\.messageID) == newest)

        // And the next one appends again
        let compacted = try inodeAndSize(dataFile()).inode
        try await cache.messages.save([Fixtures.message(next + 1, at: (next + 1) * 1_000)])
        try await cache.flush()
        #expect(try inodeAndSize(dataFile()).inode == compacted)
        #expect(try lineCount(dataFile()) == limit + 1)
        #expect(try await cache.messages.load(in: url).map(\.messageID) == Array((next - Int64(limit) + 2)...(next + 1)))
    }

    // MARK: - An append cut short

    static let leftovers = ["Zm9vYmFy\n", "half a line", "Zm9v\nYmFy\nnot even Base64 ###"]

    @Test(arguments: leftovers)
    func anAppendCutShortIsCutOffByTheNextLoad(leftover: String) async throws {
        // Given a channel of 3 messages on disk, held in memory
        let cache = try cache()
        try cache.messages.saveNow(Fixtures.messages(3))
        #expect(try await cache.messages.load(in: url) == Fixtures.messages(3))
        let original = try Data(contentsOf: dataFile())
        let sidecarBefore = try Data(contentsOf: sidecar())

        // When bytes an append never confirmed follow the data (its sidecar untouched)
        let handle = try FileHandle(forWritingTo: dataFile())
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(leftover.utf8))
        try handle.close()

        // Then a read-only cache reads the original records and leaves the file as it is
        let reader = try self.cache(readOnly: true)
        #expect(try reader.messages.loadNow(in: url) == Fixtures.messages(3))
        #expect(try Data(contentsOf: dataFile()) == original + Data(leftover.utf8))

        // and the writable cache that held it notices, reads the original records, and cuts the file back
        #expect(try await cache.messages.load(in: url) == Fixtures.messages(3))
        #expect(try Data(contentsOf: dataFile()) == original)
        #expect(try Data(contentsOf: sidecar()) == sidecarBefore)
        #expect(recorder.entries.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: folder.appending("quarantine").path))

        // and the next append follows the original records
        try cache.messages.saveNow([Fixtures.message(4, at: 4_000)])
        #expect(try fresh().messages.loadNow(in: url) == Fixtures.messages(4))
        #expect(try sidecarMatchesData())
    }

    @Test func aFreshCacheCutsOffAnAppendCutShort() throws {
        // Given a channel on disk with an unconfirmed line after its data
        try cache().messages.saveNow(Fixtures.messages(3))
        let original = try Data(contentsOf: dataFile())
        try (original + Data("Zm9vYmFy\n".utf8)).write(to: dataFile())

        // When a fresh cache loads it
        let loaded = try fresh().messages.loadNow(in: url)

        // Then it gets the original records and the file is cut back
        #expect(loaded == Fixtures.messages(3))
        #expect(try Data(contentsOf: dataFile()) == original)
        #expect(recorder.entries.isEmpty)
    }
}
