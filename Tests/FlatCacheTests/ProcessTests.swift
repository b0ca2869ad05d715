import FlatCache
import Foundation
import Testing

/// Two processes on one cache folder, as an app and its extension share one:
/// neither loses the other's saves, and neither takes a file mid-replace for corrupt.
@Suite struct ProcessTests {
    let folder: TemporaryFolder

    init() throws {
        folder = try TemporaryFolder()
    }

    /// The helper executable, built beside the test bundle.
    static var helper: URL { Executables.url("flatcache-test-helper") }

    func run(worker: Int, count: Int) throws -> Process {
        let process = Process()
        process.executableURL = Self.helper
        process.arguments = ["upsert", folder.url.path, "\(worker)", "\(count)"]
        try process.run()
        return process
    }

    @Test(.timeLimit(.minutes(1)))
    func twoProcessesUpsertingOneChannelLoseNothing() throws {
        // Given a cache folder and two processes upserting into one channel, one save at a time
        _ = try ChatCache(directory: folder.url)
        let count = 150
        let processes = try [run(worker: 1, count: count), run(worker: 2, count: count)]
        for process in processes { process.waitUntilExit() }

        // Then both finished without reading a file as corrupt
        #expect(processes.map(\.terminationStatus) == [0, 0])
        // and every save of both is there: each read-modify-write saw the other's
        let cache = try ChatCache(directory: folder.url, configuration: Configuration(maxMessagesPerChannel: 100_000))
        #expect(try cache.messages.blocking.load(in: "shared").count == 2 * count)
        #expect(try cache.messages.blocking.load(in: "own-1").count == count)
        #expect(try cache.messages.blocking.load(in: "own-2").count == count)
        #expect(!FileManager.default.fileExists(atPath: folder.appending("quarantine").path))
        // and the folder holds only the cache's own files
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).sorted() == ["format", "messages", "records"])
    }
}
