@testable import FlatCache
import Foundation
import Testing

/// kill -9 of a process at random moments while it changes messages and its
/// search index saves itself again and again: after every kill the folder
/// verifies clean, and a new instance's search finds exactly what the
/// reference matcher finds in the messages a load returns (the saved index,
/// caught up, or built again).
///
/// `swift test` kills 50 times; `FLATCACHE_SEARCH_KILLS=500 swift test --filter SearchCrashTests` runs more.
@Suite(.serialized) struct SearchCrashTests {
    /// The words `search-churn` writes (Tests/Helpers/TestHelper/SearchChurn.swift).
    static let words = ["trail", "river", "coffee", "東京", "café", "noon", "tent", "ありがとう"]

    static var kills: Int { ProcessInfo.processInfo.environment["FLATCACHE_SEARCH_KILLS"].flatMap(Int.init) ?? 50 }

    @Test(.timeLimit(.minutes(5)))
    func afterAKillAtAnyMomentSearchFindsWhatTheMessagesHold() async throws {
        let folder = try TemporaryFolder()
        var random = SystemRandomNumberGenerator()
        var (killedWithSnapshot, searchesBeforeKills) = (0, 0)
        for run in 0..<Self.kills {
            let killAfter = UInt32.random(in: 20_000...250_000, using: &random)
            let lines = try await offThePool { try Self.runHelper(folder.url.path, seed: UInt64(run), killAfter: killAfter) }
            searchesBeforeKills += lines.filter { $0.hasPrefix("searched ") }.count
            if FileManager.default.fileExists(atPath: folder.appending("search.lines").path) { killedWithSnapshot += 1 }
            try await check(folder, run: run)
        }
        print("search crash test: \(Self.kills) kills, \(searchesBeforeKills) searches before them, a snapshot on disk after \(killedWithSnapshot)")
        #expect(killedWithSnapshot > Self.kills / 2, "the kills came before any snapshot was saved: nothing was tested")
    }

    /// The folder verifies clean, and every word's hits are the reference's.
    func check(_ folder: TemporaryFolder, run: Int) async throws {
        let cache = try ChatCache(directory: folder.url)
        let problems = try cache.blocking.verify().filter { $0.problem != nil }
        #expect(problems.isEmpty, "run \(run): \(problems)")
        let all = try cache.messages.blocking.loadAll()
        for word in Self.words {
            let query = SearchQuery(word)
            let expected = Set(all.filter { query.match(in: $0.text) != nil }.map { "\($0.channelURL)/\($0.messageID)" })
            let found = try await cache.search.messages(matching: word, limit: 10_000).hits.map { "\($0.channelURL)/\($0.message.messageID)" }
            #expect(Set(found) == expected && found.count == expected.count, "run \(run), \(word)")
        }
    }

    static func runHelper(_ folder: String, seed: UInt64, killAfter: UInt32) throws -> [String] {
        let process = Process()
        process.executableURL = ProcessTests.helper
        process.arguments = ["search-churn", folder, "\(seed)"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        usleep(killAfter)
        kill(process.processIdentifier, SIGKILL)
        let bytes = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
    }
}
