@testable import FlatCache
import Foundation
import Testing

@Suite struct RecordFileTests {
    let folder: TemporaryFolder
    let file: RecordFile
    let records = [Data("first".utf8), Data("second ✓".utf8)]

    init() throws {
        folder = try TemporaryFolder()
        file = RecordFile(path: folder.appending("data.lines").path)
    }

    private func inode(_ path: String) throws -> UInt64 {
        try #require(try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? UInt64)
    }

    @Test func readsBackWhatItWrote() throws {
        #expect(try file.write(records, synchronized: false) == .written)
        #expect(try file.read() == .records(FileLines(records: records)))
    }

    @Test func aMissingFileReadsAsMissing() throws {
        #expect(try file.read() == .missing)
    }

    @Test func writesAnExactSha256sumSidecar() throws {
        _ = try file.write(records, synchronized: true)
        let body = try Data(contentsOf: URL(fileURLWithPath: file.path))
        let sidecar = try String(contentsOfFile: file.sidecarPath, encoding: .utf8)
        #expect(sidecar == "\(SHA256Digest(of: body).hex)  data.lines\n")
    }

    @Test func skipsTheWriteWhenTheBytesAreUnchanged() throws {
        // Given a written file
        _ = try file.write(records, synchronized: false)
        let dataInode = try inode(file.path)
        let sidecarInode = try inode(file.sidecarPath)

        // When the same records are written again
        let outcome = try file.write(records, synchronized: false)

        // Then nothing was replaced (a replace would bring new inodes)
        #expect(outcome == .unchanged)
        #expect(try inode(file.path) == dataInode)
        #expect(try inode(file.sidecarPath) == sidecarInode)
    }

    @Test func replacesTheFileWhenTheBytesChange() throws {
        _ = try file.write(records, synchronized: false)
        #expect(try file.write(Array(records.reversed()), synchronized: false) == .written)
        #expect(try file.read() == .records(FileLines(records: Array(records.reversed()))))
    }

    @Test func rewritesAFileOfTheSameSizeAndLineLengthsButOtherBytes() throws {
        // Given a whole file (its sidecar names it) whose lines are as long as the new ones
        _ = try file.write([Data("one!".utf8), Data("two!".utf8)], synchronized: false)

        // When other records of the same lengths are written
        let other = [Data("une!".utf8), Data("deux".utf8)]
        let outcome = try file.write(other, synchronized: false)

        // Then the bytes, not only the sizes and the sidecar, told them apart
        #expect(outcome == .written)
        #expect(try file.read() == .records(FileLines(records: other)))
    }

    @Test func replacesByRenameSoAReaderOfTheOldFileSeesItWhole() throws {
        // Given a reader that opened the current file
        _ = try file.write(records, synchronized: false)
        let oldBytes = try Data(contentsOf: URL(fileURLWithPath: file.path))
        let reader = try FileHandle(forReadingFrom: URL(fileURLWithPath: file.path))
        defer { try? reader.close() }
        let oldInode = try inode(file.path)

        // When new content is written
        _ = try file.write([Data(repeating: 7, count: 10_000)], synchronized: false)

        // Then the path names a new file, and the reader still has the whole old one
        #expect(try inode(file.path) != oldInode)
        #expect(try reader.readToEnd() == oldBytes)
    }

    @Test func rewritesWhenTheDataFileWasRemovedButTheSidecarMatches() throws {
        _ = try file.write(records, synchronized: false)
        try FileManager.default.removeItem(atPath: file.path)
        #expect(try file.read() == .missing)
        #expect(try file.write(records, synchronized: false) == .written)
        #expect(try file.read() == .records(FileLines(records: records)))
    }

    @Test func leavesNoTemporaryFilesBehind() throws {
        _ = try file.write(records, synchronized: true)
        _ = try file.write([], synchronized: false)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).sorted()
            == ["data.lines", "data.lines.sha256"])
    }

    @Test func reusesATemporaryFileACrashLeftBehind() throws {
        try Data("half a write".utf8).write(to: URL(fileURLWithPath: FileSystem.temporaryPath(for: file.path)))
        _ = try file.write(records, synchronized: false)
        #expect(try file.read() == .records(FileLines(records: records)))
        #expect(!FileManager.default.fileExists(atPath: FileSystem.temporaryPath(for: file.path)))
    }

    @Test func finishesAReplaceACrashCutBetweenTheTwoRenames() throws {
        // Given the state a crash leaves after the data file's rename, before the sidecar's:
        // new data, old sidecar, and the new sidecar complete in its temporary file
        _ = try file.write(records, synchronized: false)
        let newer = [Data("third".utf8)]
        let body = RecordLines.encode(newer)
        try body.write(to: URL(fileURLWithPath: file.path))
        try Sidecar.contents(digest: SHA256Digest(of: body), name: file.name)
            .write(to: URL(fileURLWithPath: FileSystem.temporaryPath(for: file.sidecarPath)))

        // When it is read, the replace is finished: the new records, a matching sidecar, no temporary file
        #expect(try file.read() == .records(FileLines(records: newer)))
        #expect(try Data(contentsOf: URL(fileURLWithPath: file.sidecarPath)) == Sidecar.contents(digest: SHA256Digest(of: body), name: file.name))
        #expect(!FileManager.default.fileExists(atPath: FileSystem.temporaryPath(for: file.sidecarPath)))
    }

    @Test func aStaleTemporarySidecarIsNotUsedForOtherData() throws {
        _ = try file.write(records, synchronized: false)
        try Sidecar.contents(digest: SHA256Digest(of: Data("something else".utf8)), name: file.name)
            .write(to: URL(fileURLWithPath: FileSystem.temporaryPath(for: file.sidecarPath)))
        try Data("QQ==\n".utf8).write(to: URL(fileURLWithPath: file.path))
        guard case .corrupt(.digestMismatch) = try file.read() else {
            Issue.record("a sidecar for other bytes must not vouch for these")
            return
        }
    }

    @Test func removesBothFiles() throws {
        _ = try file.write(records, synchronized: false)
        try file.remove()
        try file.remove()  // twice is fine
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path) == [])
    }

    // MARK: - What a read must not trust

    @Test func aChangedByteIsADigestMismatch() throws {
        _ = try file.write(records, synchronized: false)
        var body = try Data(contentsOf: URL(fileURLWithPath: file.path))
        body[0] ^= 0x01
        try body.write(to: URL(fileURLWithPath: file.path))
        guard case .corrupt(.digestMismatch) = try file.read() else {
            Issue.record("expected a digest mismatch")
            return
        }
    }

    @Test func aMissingSidecarIsCorrupt() throws {
        _ = try file.write(records, synchronized: false)
        try FileManager.default.removeItem(atPath: file.sidecarPath)
        #expect(try file.read() == .corrupt(.missingSidecar))
    }

    @Test func aSidecarForAnotherFileIsCorrupt() throws {
        _ = try file.write(records, synchronized: false)
        let body = try Data(contentsOf: URL(fileURLWithPath: file.path))
        try Sidecar.contents(digest: SHA256Digest(of: body), name: "other.lines")
            .write(to: URL(fileURLWithPath: file.sidecarPath))
        #expect(try file.read() == .corrupt(.malformedSidecar))
    }

    /// Damage that a matching sidecar would not catch, checked on its own.
    private func writeWithMatchingSidecar(_ body: String) throws {
        let data = Data(body.utf8)
        try data.write(to: URL(fileURLWithPath: file.path))
        try Sidecar.contents(digest: SHA256Digest(of: data), name: file.name)
            .write(to: URL(fileURLWithPath: file.sidecarPath))
    }

    @Test func aTruncatedLastLineIsCorruptEvenWithAMatchingSidecar() throws {
        try writeWithMatchingSidecar("QQ==\nQU")
        #expect(try file.read() == .corrupt(.missingFinalNewline))
    }

    @Test func aBadBase64LineIsCorruptEvenWithAMatchingSidecar() throws {
        try writeWithMatchingSidecar("QQ==\nnot base64!\n")
        #expect(try file.read() == .corrupt(.invalidBase64(line: 2)))
    }

    @Test func aFolderWhereTheDataFileBelongsIsCorrupt() throws {
        try FileManager.default.createDirectory(atPath: file.path, withIntermediateDirectories: false)
        #expect(try file.read() == .corrupt(.notARegularFile))
    }

    @Test func aSymbolicLinkIsNeverFollowed() throws {
        // Given a data file that is a link to a valid record file elsewhere
        let elsewhere = RecordFile(path: folder.appending("elsewhere.lines").path)
        _ = try elsewhere.write(records, synchronized: false)
        try FileManager.default.createSymbolicLink(atPath: file.path, withDestinationPath: elsewhere.path)
        try FileManager.default.copyItem(atPath: elsewhere.sidecarPath, toPath: file.sidecarPath)

        // Then it is not read through
        #expect(try file.read() == .corrupt(.notARegularFile))
    }

    @Test func aLoneSidecarReadsAsMissing() throws {
        // An interrupted removal (data file first) leaves only the sidecar.
        _ = try file.write(records, synchronized: false)
        try FileManager.default.removeItem(atPath: file.path)
        #expect(try file.read() == .missing)
    }
}
