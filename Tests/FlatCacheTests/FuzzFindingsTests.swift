@testable import FlatCache
import Foundation
import Testing

/// Every input the fuzzer (`Fuzz/run`) ever crashed on, replayed the way the
/// fuzz target runs it: the first byte picks the file (bits 0-1: channels,
/// users, a channel's messages) and the sidecar (bit 2: computed from the
/// data, or the input's second half raw); a load must return only records
/// that are, byte for byte, lines of the file.
@Suite struct FuzzFindingsTests {
    static let findings = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("FuzzFindings")

    static var inputs: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: findings.path)) ?? []).sorted()
    }

    @Test func thereAreFindingsToReplay() {
        #expect(!Self.inputs.isEmpty, "Tests/FlatCacheTests/FuzzFindings is empty or missing")
    }

    @Test(arguments: inputs)
    func aFindingLoadsOnlyRecordsThatAreLinesOfTheFile(name: String) throws {
        let input = try Data(contentsOf: Self.findings.appendingPathComponent(name))
        let folder = try TemporaryFolder()
        let cache = try ChatCache(directory: folder.url, configuration: Configuration(logger: LogRecorder().logger))
        let mode = try #require(input.first)
        var body = Data(input.dropFirst())
        let file: RecordFile
        switch mode & 3 {
        case 0: file = CacheLayout(root: folder.url.path).channelsFile
        case 1: file = CacheLayout(root: folder.url.path).usersFile
        default: file = try CacheLayout(root: folder.url.path).messagesFile(forChannel: "fuzz")
        }
        var sidecar = Data()
        if mode & 4 == 0 {
            sidecar = Sidecar.contents(digest: SHA256Digest(of: body), name: file.name)
        } else {
            sidecar = Data(body.suffix(body.count - body.count / 2))
            body = Data(body.prefix(body.count / 2))
        }
        try FileManager.default.createDirectory(
            atPath: FileSystem.parent(of: file.path), withIntermediateDirectories: true)
        try body.write(to: URL(fileURLWithPath: file.path))
        try sidecar.write(to: URL(fileURLWithPath: file.sidecarPath))

        let lines = Set(body.split(separator: 0x0A, omittingEmptySubsequences: false).map { Data($0) })
        let loaded: [Data] = switch mode & 3 {
        case 0: try cache.channels.load().map { try $0.serialize() }
        case 1: try cache.users.load().map { try $0.serialize() }
        default: try cache.messages.load(in: "fuzz").map { try $0.serialize() }
        }
        for record in loaded {
            #expect(lines.contains(record.base64EncodedData()), "a load returned a record that is not a line of the file")
        }
    }
}
