@testable import FlatCache
import Foundation
import Testing

/// The file system fails (as injected through `FileSystem`'s one seam):
/// each failure is a typed error, the previous content stays loadable, and
/// nothing half-written is left behind. Tests run as root here, so
/// permission bits cannot produce EACCES: it is injected like the rest.
@Suite struct FaultInjectionTests {
    static let codes: [POSIXErrorCode] = [.ENOSPC, .EIO, .EACCES, .EROFS]

    let folder: TemporaryFolder
    let recorder = LogRecorder()
    let url = Fixtures.channelURL
    let before = Fixtures.messages(3)
    let after = Fixtures.messages(5)

    init() throws {
        folder = try TemporaryFolder()
        try cache().messages.replace(before, in: url)
    }

    func cache(_ durability: Durability = .atomic) throws -> ChatCache<ChatMessage, ChatChannel, ChatUser> {
        try ChatCache(directory: folder.url, configuration: Configuration(durability: durability, logger: recorder.logger))
    }

    func arm(_ operation: FlatCacheError.FileOperation, _ code: POSIXErrorCode?, after: Int = 0, maximumWriteSize: Int? = nil) {
        FaultInjection.arm(.init(
            operation: operation, pathPrefix: folder.url.path, code: code, after: after, maximumWriteSize: maximumWriteSize))
    }

    func disarm() {
        FaultInjection.disarm(below: folder.url.path)
    }

    /// The previous content loads, nothing was taken for corrupt, and no temporary file is left.
    func expectPreviousContentIntact(sourceLocation: SourceLocation = #_sourceLocation) throws {
        #expect(try cache().messages.load(in: url) == before, sourceLocation: sourceLocation)
        #expect(recorder.entries.isEmpty, sourceLocation: sourceLocation)
        let hidden = try FileManager.default.contentsOfDirectory(atPath: folder.appending("messages").path)
            .filter { $0.hasPrefix(".") }
        #expect(hidden.isEmpty, "left behind: \(hidden)", sourceLocation: sourceLocation)
    }

    func expectFailure(
        _ operation: FlatCacheError.FileOperation, _ code: POSIXErrorCode, sourceLocation: SourceLocation = #_sourceLocation,
        _ body: () throws -> Void
    ) {
        #expect(sourceLocation: sourceLocation) {
            try body()
        } throws: { error in
            guard case FlatCacheError.fileSystem(let failed, _, let failedCode) = error else { return false }
            return failed == operation && failedCode == code
        }
    }

    @Test(arguments: codes, [FlatCacheError.FileOperation.open, .write, .rename])
    func aFailedSaveThrowsAndKeepsThePreviousContent(code: POSIXErrorCode, operation: FlatCacheError.FileOperation) throws {
        let cache = try cache()
        arm(operation, code)
        expectFailure(operation, code) { try cache.messages.replace(after, in: url) }
        disarm()
        try expectPreviousContentIntact()
    }

    @Test(arguments: codes)
    func aFailedSyncThrowsAndKeepsThePreviousContent(code: POSIXErrorCode) throws {
        let cache = try cache(.synchronized)
        arm(.sync, code)
        expectFailure(.sync, code) { try cache.messages.replace(after, in: url) }
        disarm()
        try expectPreviousContentIntact()
    }

    @Test(arguments: codes)
    func aWriteThatFailsHalfwayLeavesNothingHalfWritten(code: POSIXErrorCode) throws {
        // Given writes that take 64 bytes at a time and fail on the third call
        let cache = try cache()
        arm(.write, nil, maximumWriteSize: 64)
        arm(.write, code, after: 2)
        expectFailure(.write, code) { try cache.messages.replace(after, in: url) }
        disarm()
        try expectPreviousContentIntact()
    }

    @Test func shortWritesStillWriteEverything() throws {
        let cache = try cache()
        arm(.write, nil, maximumWriteSize: 7)
        defer { disarm() }
        try cache.messages.replace(after, in: url)
        #expect(try cache.messages.load(in: url) == after)
    }

    @Test(arguments: codes, [FlatCacheError.FileOperation.open, .read])
    func aFailedReadThrowsAndMovesNothingAside(code: POSIXErrorCode, operation: FlatCacheError.FileOperation) throws {
        let cache = try cache()
        arm(operation, code)
        expectFailure(operation, code) { _ = try cache.messages.load(in: url) }
        disarm()
        // An I/O error is not corruption: the file stays where it is and loads afterwards.
        #expect(!FileManager.default.fileExists(atPath: folder.appending("quarantine").path))
        try expectPreviousContentIntact()
    }

    @Test(arguments: codes)
    func aFolderThatCannotBeCreatedIsATypedError(code: POSIXErrorCode) throws {
        let cache = try cache()
        arm(.createDirectory, code)
        defer { disarm() }
        try FileManager.default.removeItem(at: folder.appending("messages"))
        expectFailure(.createDirectory, code) { try cache.messages.replace(after, in: url) }
    }

    @Test func aFailedRemovalIsATypedErrorAndKeepsTheContent() throws {
        let cache = try cache()
        arm(.remove, .EIO)
        expectFailure(.remove, .EIO) { try cache.messages.removeAll(in: url) }
        disarm()
        try expectPreviousContentIntact()
    }

    @Test func aFailedSidecarRenameReadsAsAMissNeverAsWrongRecords() throws {
        // The one window two files leave: the data file was renamed, its sidecar was not.
        let cache = try cache()
        FaultInjection.arm(.init(operation: .rename, pathPrefix: folder.url.path, code: .EIO, after: 1))
        expectFailure(.rename, .EIO) { try cache.messages.replace(after, in: url) }
        disarm()
        // The new data file begins with the old one's lines, which the old sidecar still names:
        // the load reads those (the content before the failed save), never the unconfirmed rest.
        #expect(try cache.messages.load(in: url) == before)
        #expect(recorder.entries.isEmpty)
        try cache.messages.replace(after, in: url)
        #expect(try cache.messages.load(in: url) == after)
    }

    @Test func aFailedSidecarRenameOfAnUnrelatedFileReadsAsAMissNeverAsWrongRecords() throws {
        // The data file was renamed, its sidecar was not, and the old lines are not a prefix of the new.
        let cache = try cache()
        let other = Array(after.reversed().prefix(2))
        FaultInjection.arm(.init(operation: .rename, pathPrefix: folder.url.path, code: .EIO, after: 1))
        expectFailure(.rename, .EIO) { try cache.messages.replace(other, in: url) }
        disarm()
        #expect(try cache.messages.load(in: url) == [])  // a miss, reported and moved aside
        #expect(recorder.entries.count == 1)
        try cache.messages.replace(after, in: url)  // and the next save heals it
        #expect(try cache.messages.load(in: url) == after)
    }
}
