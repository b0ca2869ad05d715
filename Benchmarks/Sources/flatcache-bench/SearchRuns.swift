import BenchmarkKit
import FlatCache
import Foundation

/// Times the search rows on one workload, FlatCache against SQLite FTS5, in `folder`
/// (emptied first). Every row alternates the systems, and which goes first, round by round.
struct SearchRuns {
    /// The workload, its text from ``SearchText`` (``Workload/withSearchText(seed:)``).
    let workload: Workload
    let folder: URL
    let rounds: Int
    /// Hits asked of each query: a result list's first page.
    static let limit = 20
    /// The rows of one write each take milliseconds: more rounds steady their medians.
    static let writeRoundsFactor = 3

    private let kinds = SearchSystemKind.allCases

    func measure() throws -> SearchResult {
        var result = SearchResult(workload: workload, rounds: rounds, queries: SearchBenchQuery.standard)
        let name = workload.name
        try? FileManager.default.removeItem(at: folder)
        var systems = [SearchSystemKind: any SearchSystem]()
        for kind in kinds {
            progress("[search \(name)] storing \(workload.messageCount) messages in \(kind.rawValue), no index yet")
            let system = try kind.open(in: folder.appendingPathComponent(kind.slug))
            try system.store(workload)
            systems[kind] = system
        }
        func system(_ kind: SearchSystemKind) -> any SearchSystem { systems[kind]! }  // all opened above

        progress("[search \(name)] index everything from scratch, \(rounds) rounds")
        result.fromScratch = try interleaved(
            kinds, warmUp: 1, rounds: rounds, prepare: { kind, _ in try system(kind).dropIndex() }
        ) { kind, _ in try system(kind).indexFromScratch() }
        for kind in kinds {
            let count = try system(kind).indexedMessageCount()
            guard count == workload.messageCount else {
                throw BenchmarkError("\(kind.rawValue) indexed \(count) messages, not \(workload.messageCount)")
            }
            result.indexBytes[kind] = try system(kind).indexBytes()
        }

        progress("[search \(name)] \(result.queries.count) queries, \(rounds) rounds")
        try measureQueries(into: &result, system)
        progress("[search \(name)] relevance: the top hits of both")
        result.relevance = try SearchRelevance.compare(result, workload: workload, systems: systems)

        let writeRounds = rounds * Self.writeRoundsFactor
        result.writeRounds = writeRounds
        progress("[search \(name)] index one new message, \(writeRounds) rounds")
        result.newMessage = try writeThenSearch(system, (0...writeRounds).map { round in
            let message = workload.searchArrival(round: round)
            return Change(query: .words(Workload.searchMarker("zephyr", round: round)), expected: [message.messageID]) {
                try $0.save(message)
            }
        })
        progress("[search \(name)] change log of 5 edits and 2 deletions, \(writeRounds) rounds")
        result.changeLog = try writeThenSearch(system, (0...writeRounds).map { round in
            let log = workload.searchChangeLog(round: round)
            return Change(query: .words(Workload.searchMarker("amended", round: round)), expected: Set(log.updated.map(\.messageID))) {
                try $0.apply(log)
            }
        })
        // Both hold the same messages after the writes (new ones in, deleted ones out).
        let counts = try kinds.map { try system($0).indexedMessageCount() }
        guard Set(counts).count == 1 else { throw BenchmarkError("the stores differ after the writes: \(counts)") }
        for kind in kinds { try system(kind).close() }

        progress("[search \(name)] peak memory and allocations while indexing, in child processes")
        for kind in kinds {
            let arguments = ["index", kind.slug, folder.appendingPathComponent(kind.slug).path]
            var memory = try ProbeRuns.run(arguments, countAllocations: false)
            let counted = try ProbeRuns.run(arguments, countAllocations: true)
            (memory.mallocs, memory.mallocBytes) = (counted.mallocs, counted.mallocBytes)
            // Each probe starts from the store as it was saved (``SearchSystem/dropIndex()``).
            guard memory.peak > 0, memory.messages == workload.messageCount else {
                throw BenchmarkError("the probe indexing \(kind.rawValue) failed (it held \(memory.messages) messages)")
            }
            result.memory[kind] = memory
        }
        try? FileManager.default.removeItem(at: folder)
        return result
    }

    /// Each query on both systems in turn, query by query, one warm-up round first.
    private func measureQueries(into result: inout SearchResult, _ system: (SearchSystemKind) -> any SearchSystem) throws {
        let queries = result.queries
        for kind in kinds {
            result.queryTimes[kind] = Array(repeating: Samples(), count: queries.count)
            result.hits[kind] = Array(repeating: [], count: queries.count)
        }
        for round in 0...rounds {
            for (index, query) in queries.enumerated() {
                for kind in round % 2 == 0 ? kinds : kinds.reversed() {
                    var found = [SearchBenchHit]()
                    let seconds = try time { found = try system(kind).search(query, limit: Self.limit) }
                    guard round > 0 else { continue }
                    result.queryTimes[kind]![index].seconds.append(seconds)
                    result.hits[kind]![index] = found
                }
            }
        }
    }

    /// One round's write, and what the first search after it must find.
    private struct Change {
        /// The query that finds what was written.
        let query: SearchBenchQuery
        /// The ids it must find, no more, no fewer.
        let expected: Set<Int64>
        let write: (any SearchSystem) throws -> Void
    }

    /// Times each change's write and the first search after it, then the same search again,
    /// round by round (the first change is the warm-up).
    private func writeThenSearch(
        _ system: (SearchSystemKind) -> any SearchSystem, _ changes: [Change]
    ) throws -> [SearchSystemKind: SearchResult.WriteThenSearch] {
        var results = [SearchSystemKind: SearchResult.WriteThenSearch]()
        for (round, change) in changes.enumerated() {
            for kind in round % 2 == 0 ? kinds : kinds.reversed() {
                let writing = try time { try change.write(system(kind)) }
                var found = [SearchBenchHit]()
                let searching = try time { found = try system(kind).search(change.query, limit: Self.limit) }
                let again = try time { _ = try system(kind).search(change.query, limit: Self.limit) }
                guard Set(found.map(\.messageID)) == change.expected else {
                    throw BenchmarkError(
                        "\(kind.rawValue) found \(found.map(\.messageID)) for \(change.query.label), not \(change.expected.sorted())")
                }
                guard round > 0 else { continue }
                results[kind, default: .init()].write.seconds.append(writing)
                results[kind, default: .init()].firstSearch.seconds.append(searching)
                results[kind, default: .init()].searchAgain.seconds.append(again)
                results[kind, default: .init()].total.seconds.append(writing + searching)
            }
        }
        return results
    }
}
