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

    func run(_ command: String = "upsert", worker: Int, count: Int) throws -> Process {
        let process = Process()
        process.executableURL = Self.helper
        process.arguments = [command, folder.url.path, "\(worker)", "\(count)"]
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

    @Test(.timeLimit(.minutes(1)))
    func twoProcessesAppendingEditsToOneFileLoseNothing() throws {
        // Given two processes that save messages into one channel, then edit or delete each with a change log
        // of its own, flushed each time: both append lines to one file (format 2), one of them to a file it
        // keeps only a summary of
        _ = try ChatCache(directory: folder.url)
        let count = 60
        let processes = try [run("edit", worker: 1, count: count), run("edit", worker: 2, count: count)]
        for process in processes { process.waitUntilExit() }
        #expect(processes.map(\.terminationStatus) == [0, 0])

        // Then every edit and every deletion of both is there, nothing else
        let cache = try ChatCache(directory: folder.url, configuration: Configuration(maxMessagesPerChannel: 100_000))
        let shared = try cache.messages.blocking.load(in: "shared")
        var expected = [Int64: String]()
        for worker in 1...2 {
            for index in 1...count where index % 3 != 0 { expected[Int64(worker * 100_000 + index)] = "edited by \(worker)" }
        }
        #expect(shared.count == expected.count)
        #expect(Dictionary(uniqueKeysWithValues: shared.map { ($0.messageID, $0.text) }) == expected)
        #expect(!FileManager.default.fileExists(atPath: folder.appending("quarantine").path))
        #expect(try cache.blocking.verify().allSatisfy(\.isValid))
    }
}
