@testable import FlatCache
import Foundation
import Testing

/// A cache that may only be read: in an app bundle, on a read-only mount, or
/// owned by another user. Loads need read permission alone and change
/// nothing; writes fail with a typed error.
///
/// The tests run as root, whom permissions do not stop, so the unprivileged
/// case runs the helper as user `nobody` (`setpriv --reuid=65534`); the rest
/// use `Configuration.readOnly`, which takes the same path.
@Suite struct ReadOnlyTests {
    let folder: TemporaryFolder
    let cache: URL
    let channel = Fixtures.channelURL

    init() throws {
        folder = try TemporaryFolder()
        cache = folder.appending("cache")
        let writer = try ChatCache(directory: cache)
        try writer.channels.replace(with: [Fixtures.channel(channel, lastMessageAt: 3_000), Fixtures.channel("b", lastMessageAt: 1)])
        try writer.messages.replace(Fixtures.messages(3), in: channel)
        try writer.messages.replace(Fixtures.messages(2, in: "b"), in: "b")
        try writer.users.save([Fixtures.mina])
    }

    /// A copy of the cache as it is now, to compare with afterwards.
    func snapshot() throws -> URL {
        let copy = folder.appending("before-\(UUID().uuidString)")
        try FileManager.default.copyItem(at: cache, to: copy)
        return copy
    }

    func expectUnchanged(since copy: URL, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let differences = try GoldenFolder.differences(between: cache, and: copy)
        #expect(differences.isEmpty, "the folder changed: \(differences)", sourceLocation: sourceLocation)
    }

    func flipAByte(in relativePath: String) throws {
        let url = cache.appendingPathComponent(relativePath)
        var bytes = try Data(contentsOf: url)
        bytes[5] ^= 1
        try bytes.write(to: url)
    }

    /// The message file of channel "b", relative to the cache folder.
    var bFile: String {
        "messages/" + SHA256Digest(of: Data("b".utf8)).hex + ".lines"
    }

    @Test func readsEverythingAndChangesNothing() throws {
        let before = try snapshot()
        let reader = try ChatCache(directory: cache, configuration: Configuration(readOnly: true))
        #expect(reader.isReadOnly)
        #expect(try reader.channels.load().count == 2)
        #expect(try reader.messages.load(in: channel) == Fixtures.messages(3))
        #expect(try reader.users.load() == [Fixtures.mina])
        #expect(try reader.verify().allSatisfy(\.isValid))
        try expectUnchanged(since: before)
    }

    @Test func aDamagedFileReadsAsAMissIsReportedAndStaysInPlace() throws {
        try flipAByte(in: bFile)
        let before = try snapshot()
        let recorder = DamageRecorder()
        let reader = try ChatCache(directory: cache, configuration: recorder.configuration(readOnly: true))

        #expect(try reader.messages.load(in: "b") == [])
        #expect(try reader.messages.loadIfCached(in: "b") == nil)
        #expect(try reader.messages.load(in: channel).count == 3)

        #expect(recorder.files.count == 2)
        #expect(recorder.files.allSatisfy { $0.path == bFile && $0.movedTo == nil && $0.problem.contains("SHA256") })
        try expectUnchanged(since: before)  // no quarantine folder, nothing moved
    }

    @Test func everyWriteThrowsReadOnlyCache() throws {
        let before = try snapshot()
        let reader = try ChatCache(directory: cache, configuration: Configuration(readOnly: true))
        func expectReadOnly(_ write: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) {
            #expect(sourceLocation: sourceLocation) { try write() } throws: { error in
                guard case FlatCacheError.readOnlyCache(let url) = error else { return false }
                return url == cache
            }
        }
        expectReadOnly { try reader.messages.save(Fixtures.messages(1)) }
        expectReadOnly { try reader.messages.save([]) }
        expectReadOnly { try reader.messages.save([Fixtures.message(0, at: 1)]) }
        expectReadOnly { try reader.messages.replace([], in: channel) }
        expectReadOnly { try reader.messages.applyChangeLog(updated: [], deletedMessageIDs: [1], in: channel) }
        expectReadOnly { try reader.messages.removeAll(in: channel) }
        expectReadOnly { try reader.channels.save([Fixtures.channel("c", lastMessageAt: 1)]) }
        expectReadOnly { try reader.channels.replace(with: []) }
        expectReadOnly { try reader.channels.remove(channelURL: channel) }
        expectReadOnly { try reader.users.save([Fixtures.mina]) }
        expectReadOnly { try reader.users.remove(userIDs: ["mina"]) }
        expectReadOnly { try reader.removeAll() }
        expectReadOnly { _ = try reader.verify(repair: true) }
        try expectUnchanged(since: before)
    }

    @Test func aReplaceCutShortByACrashIsReadWithoutRenaming() throws {
        // Given the state a crash leaves between the two renames: new data, old sidecar, new sidecar waiting
        let file = cache.appendingPathComponent("users.lines")
        let sidecar = file.appendingPathExtension("sha256")
        let oldSidecar = try Data(contentsOf: sidecar)
        try ChatCache(directory: cache).users.save([ChatUser(userID: "zoe", nickname: "Zoe")])
        let newSidecar = try Data(contentsOf: sidecar)
        try newSidecar.write(to: cache.appendingPathComponent(".users.lines.sha256.tmp"))
        try oldSidecar.write(to: sidecar)
        let before = try snapshot()

        // When a read-only cache loads it
        let users = try ChatCache(directory: cache, configuration: Configuration(readOnly: true)).users.load()

        // Then it reads the whole new data and renames nothing
        #expect(users.map(\.userID) == ["mina", "zoe"])
        try expectUnchanged(since: before)
    }

    @Test func opensOnlyAFolderThatIsAlreadyACache() throws {
        let missing = folder.appending("missing")
        #expect { try ChatCache(directory: missing, configuration: Configuration(readOnly: true)) } throws: { error in
            guard case FlatCacheError.notACacheDirectory = error else { return false }
            return true
        }
        #expect(!FileManager.default.fileExists(atPath: missing.path))

        let empty = folder.appending("empty")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: false)
        #expect { try ChatCache(directory: empty, configuration: Configuration(readOnly: true)) } throws: { error in
            guard case FlatCacheError.notACacheDirectory = error else { return false }
            return true
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: empty.path).isEmpty)
    }

    // MARK: - As another user

    /// Runs the helper's `read` as user `nobody` and returns its output lines.
    func readAsNobody(channel: String) throws -> (status: Int32, lines: [String]) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = [
            "--reuid=65534", "--regid=65534", "--clear-groups",
            try Executables.runnableCopy(of: "flatcache-test-helper", in: folder.url).path, "read", cache.path, channel,
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init))
    }

    @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")))
    func anotherUserWithReadPermissionOnlyReadsTheCache() throws {
        // Given a root-owned cache that others may read but not write, with one damaged file
        try flipAByte(in: bFile)
        for path in [folder.url.path, cache.path] + (try FileManager.default.subpathsOfDirectory(atPath: cache.path).map { cache.path + "/" + $0 }) {
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
            _ = chmod(path, isDirectory.boolValue ? 0o755 : 0o644)
        }
        let before = try snapshot()

        // When user nobody opens and reads it, then tries to save
        let good = try readAsNobody(channel: channel)
        let run = try readAsNobody(channel: "b")

        // Then it opened read-only, read everything but the damaged file, and its save failed typed
        #expect(good.status == 0 && good.lines.contains("messages 3"), "\(good.lines)")
        #expect(run.status == 0, "\(run.lines)")
        #expect(run.lines.contains("readOnly true"))
        #expect(run.lines.contains("channels 2"))
        #expect(run.lines.contains("messages 0"))
        #expect(run.lines.contains("users 1"))
        #expect(run.lines.contains("damaged \(bFile)"))
        #expect(run.lines.contains { $0.hasPrefix("save failed: The cache at \(cache.path) is read-only") })
        // and the folder is byte for byte as it was: nothing moved, no lock file, no quarantine
        try expectUnchanged(since: before)
    }
}
