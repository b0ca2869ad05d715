import BenchmarkKit
import Foundation

/// What the search rows measured on one workload: FlatCache's `cache.search`
/// against SQLite FTS5 through GRDB, over the same messages.
struct SearchResult {
    /// A write, then the first search that must see it, then the same search again.
    struct WriteThenSearch {
        /// The write and the first search: the row's figure.
        var total = Samples()
        /// The write alone (saved, or applied, and on disk).
        var write = Samples()
        /// The first search after the write (the index catching up included).
        var firstSearch = Samples()
        /// The same search once more, nothing changed since: the query alone.
        var searchAgain = Samples()
    }

    let workload: Workload
    let rounds: Int
    /// Rounds of the two rows of one write each.
    var writeRounds = 0
    let queries: [SearchBenchQuery]

    var fromScratch = [SearchSystemKind: Samples]()
    var indexBytes = [SearchSystemKind: (bytes: Int, how: String)]()
    /// Per system, each query's timings, in the order of ``queries``.
    var queryTimes = [SearchSystemKind: [Samples]]()
    /// Per system, each query's hits in the last round.
    var hits = [SearchSystemKind: [[SearchBenchHit]]]()
    var relevance = [SearchRelevance.Row]()
    var newMessage = [SearchSystemKind: WriteThenSearch]()
    var changeLog = [SearchSystemKind: WriteThenSearch]()
    /// Indexing from scratch in a fresh process: peak resident size and growth, and with the interposer, allocations.
    var memory = [SearchSystemKind: ProbeRuns.Result]()

    /// Every timing of the queries both systems answer from their index, pooled over queries and rounds.
    func pooledQueryTimes(_ kind: SearchSystemKind) -> [Double] {
        zip(queries, queryTimes[kind] ?? []).filter { $0.0.isCompared }.flatMap { $0.1.seconds }
    }

    /// The `fraction` percentile (nearest rank) of `values`.
    static func percentile(_ values: [Double], _ fraction: Double) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        let rank = Int((fraction * Double(sorted.count)).rounded(.up))
        return sorted[min(sorted.count, max(1, rank)) - 1]
    }

    func latency(_ kind: SearchSystemKind, _ fraction: Double) -> Double {
        Self.percentile(pooledQueryTimes(kind), fraction)
    }

    /// Growth of the resident size while indexing (peak minus the size just before).
    func memoryGrowth(_ kind: SearchSystemKind) -> Int? {
        memory[kind].map { $0.peak - $0.baseline }
    }

    /// One row of the table: both systems' figures, FlatCache's over FTS5's, and the target when it has one.
    struct Row {
        let name: String
        let flatCache: String
        let fts5: String
        /// `nil` when FTS5's figure is 0.
        let ratio: Double?
        /// The largest ratio that meets the target; `nil`: no target on this workload.
        let limit: Double?
    }

    /// The table's rows. Peak memory has a target on L only, as the issue sets it.
    var rows: [Row] {
        var rows = [Row]()
        let compared = queries.filter(\.isCompared).count
        for (fraction, label) in [(0.5, "p50"), (0.95, "p95")] {
            let mine = latency(.flatCache, fraction)
            let theirs = latency(.fts5, fraction)
            rows.append(Row(
                name: "query latency, \(label) (\(compared) queries x \(rounds) rounds)", flatCache: Samples.format(mine),
                fts5: Samples.format(theirs), ratio: mine / theirs, limit: 1.0))
        }
        func timed(_ name: String, _ samples: [SearchSystemKind: Samples], limit: Double) {
            guard let mine = samples[.flatCache], let theirs = samples[.fts5] else { return }
            rows.append(Row(name: name, flatCache: mine.summary, fts5: theirs.summary, ratio: mine.median / theirs.median, limit: limit))
        }
        timed("index everything from scratch", fromScratch, limit: 1.5)
        timed("index one new message (save + first search that finds it)", newMessage.mapValues(\.total), limit: 1.0)
        timed("change log of 5 edits and 2 deletions (apply + first search that sees it)", changeLog.mapValues(\.total), limit: 1.0)
        if let mine = indexBytes[.flatCache]?.bytes, let theirs = indexBytes[.fts5]?.bytes {
            rows.append(Row(
                name: "index bytes on disk", flatCache: Report.megabytes(mine), fts5: Report.megabytes(theirs),
                ratio: theirs > 0 ? Double(mine) / Double(theirs) : nil, limit: 1.0))
        }
        if let mine = memoryGrowth(.flatCache), let theirs = memoryGrowth(.fts5) {
            rows.append(Row(
                name: "peak memory while indexing (resident growth, fresh process)", flatCache: Report.megabytes(mine),
                fts5: Report.megabytes(theirs), ratio: theirs > 0 ? Double(mine) / Double(theirs) : nil,
                limit: workload.name == "L" ? 1.5 : nil))
        }
        return rows
    }

    /// The targets this workload's rows are checked against.
    var targets: [Report.Target] {
        rows.compactMap { row in
            guard let ratio = row.ratio, let limit = row.limit else { return nil }
            return Report.Target(
                text: "\(workload.name): search, \(row.name), FlatCache / SQLite FTS5 <= \(limit)",
                measured: ratio, limit: limit, atLeast: false)
        }
    }
}
