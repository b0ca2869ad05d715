@testable import FlatCache
import Foundation
import Testing

/// A key change that a file-system error stops part way (as injected through
/// `FileSystem`'s seam) leaves its `rekey` file, and the next open finishes
/// it: with the new key forward, with the old one back (issue 25).
///
/// Unlike a kill, an error can leave one torn pair: a data file renamed
/// whose sidecar's rename failed (the write removes its waiting sidecar).
/// The change has not removed that channel's old file yet, so the next open
/// reports the torn one as damaged, drops it, and converts the old one again.
@Suite(.timeLimit(.minutes(2))) struct KeyRotationFaultTests {
    static let channelCount = 8

    /// The failures: which system call, after how many of its kind in the folder
    /// (the first `rename` is the `rekey` file's own, so each stops the change after it).
    static let faults: [(FlatCacheError.FileOperation, Int)] = [(.rename, 1), (.rename, 6), (.rename, 14), (.write, 5), (.remove, 3)]

    let folder: TemporaryFolder

    init() throws {
        folder = try TemporaryFolder()
    }

    @Test(arguments: faults.indices, [true, false])
    func aChangeStoppedByAFileSystemErrorIsFinishedByTheNextOpen(fault: Int, forward: Bool) async throws {
        let (operation, after) = Self.faults[fault]
        let (keyA, keyB) = (RotationFolder.keyA, RotationFolder.keyB)
        try await RotationFolder.fill(folder.url, encryption: .aes256gcm(key: keyA), channelCount: Self.channelCount, perChannel: 5)
        let urls = RotationFolder.channelURLs(Self.channelCount)
        let configuration = RotationFolder.configuration(.aes256gcm(key: keyA))
        let expected = try await RotationFolder.contents(of: RotationFolder.Cache(directory: folder.url, configuration: configuration), channels: urls)

        // Given a rotation that fails part way
        let cache = try RotationFolder.Cache(directory: folder.url, configuration: configuration)
        FaultInjection.arm(.init(operation: operation, pathPrefix: folder.url.path, code: .EIO, after: after))
        #expect {
            _ = try cache.blocking.rotateKey(to: keyB)
        } throws: { error in
            guard case FlatCacheError.fileSystem(let failed, _, .EIO) = error else { return false }
            return failed == operation
        }
        FaultInjection.disarm(below: folder.url.path)
        #expect(FileManager.default.fileExists(atPath: folder.appending("rekey").path), "the fault came before the change began")
        // When the next open is given the new key (or the old one), then it finishes the change that way
        let (toward, other) = forward ? (keyB, keyA) : (keyA, keyB)
        #expect(try await KeyRotationCrashTests.checkFinished(folder.url, with: toward, other: other, expected: expected, damageAllowed: true) == [])
    }
}
