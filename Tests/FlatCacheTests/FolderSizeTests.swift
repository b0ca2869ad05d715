import Foundation
import Testing

@testable import FlatCache

/// The walk a sweep under the size limit makes: the same bytes as the full
/// scan, without following links, and a sweep that removes nothing.
@Suite struct FolderSizeTests {
    let folder = try! TemporaryFolder()
    let elsewhere = try! TemporaryFolder()

    /// A cache folder with messages, a channel list, users, a quarantine
    /// entry in a folder of its own, an empty folder, a link to a large file
    /// outside and a link to a folder.
    func populate() async throws -> ChatCache<ChatMessage, ChatChannel, ChatUser> {
        let cache = try ChatCache(directory: folder.url, configuration: Configuration(writeDelay: .zero))
        try await cache.channels.replace(with: [Fixtures.channel("a", lastMessageAt: 1), Fixtures.channel("b", lastMessageAt: 2)])
        try await cache.users.save([Fixtures.mina])
        try await cache.messages.replace(Fixtures.messages(20, in: "a"), in: "a")
        try await cache.messages.replace(Fixtures.messages(7, in: "b"), in: "b")
        try await cache.flush()
        let quarantine = folder.appending("quarantine/1-incident")
        try FileManager.default.createDirectory(at: quarantine, withIntermediateDirectories: true)
        try Data(count: 4_000).write(to: quarantine.appendingPathComponent("damaged.lines"))
        try FileManager.default.createDirectory(at: folder.appending("empty"), withIntermediateDirectories: true)
        let large = elsewhere.appending("large")
        try Data(count: 1_000_000).write(to: large)
        try FileManager.default.createSymbolicLink(at: folder.appending("link-to-file"), withDestinationURL: large)
        try FileManager.default.createSymbolicLink(at: folder.appending("link-to-folder"), withDestinationURL: elsewhere.url)
        return cache
    }

    /// Every regular file under the folder, counted by Foundation without following links.
    func foundationTotal() throws -> (bytes: Int, files: Int) {
        var total = (bytes: 0, files: 0)
        let keys: [URLResourceKey] = [.isRegularFileKey, .fileSizeKey]
        let walk = FileManager.default.enumerator(at: folder.url, includingPropertiesForKeys: keys)!
        for case let url as URL in walk {
            let values = try url.resourceValues(forKeys: Set(keys))
            if values.isRegularFile == true { total = (total.bytes + values.fileSize!, total.files + 1) }
        }
        return total
    }

    @Test func theWalkCountsWhatTheFullScanCountsAndFollowsNoLink() async throws {
        _ = try await populate()
        let walked = try FileSystem.regularFileBytes(under: folder.url.path)
        let layout = CacheLayout(root: folder.url.path)
        let scan = try FolderScan(layout, usageFile: layout.usageFile)
        #expect(walked.bytes == scan.totalBytes && walked.files == scan.totalFiles)
        let expected = try foundationTotal()
        #expect(walked.bytes == expected.bytes && walked.files == expected.files)
        #expect(walked.bytes < 1_000_000)  // the linked file is not counted
    }

    @Test func aPathThatIsAFileOrMissingCountsAsItself() throws {
        let file = folder.appending("one")
        try Data(count: 123).write(to: file)
        #expect(try FileSystem.regularFileBytes(under: file.path) == (123, 1))
        #expect(try FileSystem.regularFileBytes(under: folder.appending("missing").path) == (0, 0))
    }

    @Test func aFolderThatCannotBeListedFailsTheWalk() throws {
        #if FLATCACHE_FAULTS
        let inner = folder.appending("inner")
        try FileManager.default.createDirectory(at: inner, withIntermediateDirectories: true)
        FaultInjection.arm(.init(operation: .listDirectory, pathPrefix: inner.path, code: .EACCES))
        defer { FaultInjection.disarm(below: folder.url.path) }
        let error = #expect(throws: FlatCacheError.self) { try FileSystem.regularFileBytes(under: folder.url.path) }
        guard case .fileSystem(.listDirectory, let path, .EACCES)? = error else {
            Issue.record("expected the listing of \(inner.path) to fail, got \(String(describing: error))")
            return
        }
        #expect(path == inner.path)
        #endif
    }

    @Test func aSweepUnderTheLimitRemovesNothingAndReportsTheFolderSize() async throws {
        let cache = try await populate()
        let swept = try await cache.sweep()
        let statistics = try await cache.statistics()
        #expect(swept == SweepResult(bytesBefore: swept.bytesBefore, bytesAfter: swept.bytesBefore))
        #expect(swept.bytesBefore == statistics.diskBytes)
        #expect(statistics.channelsWithMessages == 2 && statistics.quarantinedBytes == 4_000)
    }
}
