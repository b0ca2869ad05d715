import BenchmarkKit
import Foundation

/// The committed FlatCache / SQLite ratios the regression guard compares a run with
/// (`Benchmarks/baseline.json`), and each row's limit, set from the spread of the
/// passes that recorded it.
struct Baseline: Codable {
    /// One row of one workload: its ratio, the largest ratio a check accepts, and the passes behind both.
    struct Row: Codable {
        /// The row's name: the operation, and the durability of a write.
        let row: String
        /// The median of the passes' ratios.
        let ratio: Double
        /// A check fails the row when its ratio stays above this.
        let limit: Double
        /// Each pass's ratio (the median of its rounds' FlatCache / SQLite ratios).
        let passes: [Double]
    }

    /// Why this baseline was taken (the commit that records it says it again).
    var reason: String
    /// The command that recorded it.
    var command: String
    /// The commit it was measured at, with "+changes" when the work tree differed.
    var commit: String
    /// When, in ISO 8601.
    var recorded: String
    /// Measured rounds per operation in each pass (after one warm-up round).
    var rounds: Int
    /// Per workload (S, L), its rows in the report's order.
    var workloads: [String: [Row]]

    /// A row's limit, from the ratios of the passes that recorded it: the worst pass's
    /// distance from the median, doubled, and at least ``minimumFactor`` times the
    /// median; at most ``maximumFactor`` times it, so that a row twice as slow fails.
    ///
    /// A row whose own passes spread past ``maximumFactor`` (see ``isUnsteady(ratio:passes:)``)
    /// keeps its measured spread, doubled: no limit both passes its noise and fails a 2x
    /// slowdown, and the code it runs is held to 2x by the steady rows that run it too
    /// (docs/performance.md, "The regression guard").
    static func limit(ratio: Double, passes: [Double]) -> Double {
        let worst = passes.max() ?? ratio
        let spread = 1 + 2 * (worst / ratio - 1)
        if isUnsteady(ratio: ratio, passes: passes) { return ratio * spread }
        return ratio * min(maximumFactor, max(minimumFactor, spread))
    }

    /// Whether a row's worst pass was more than ``maximumFactor`` times its median: on this
    /// machine, S's cold saves and change logs, whose file creations scan past every inode
    /// ext4 freed in the last 30 s, so a round's time depends on the rounds before it.
    static func isUnsteady(ratio: Double, passes: [Double]) -> Bool {
        (passes.max() ?? ratio) > ratio * maximumFactor
    }

    /// The smallest limit, as a factor of the baseline ratio: below it, ordinary noise fails rows
    /// (one row measured 1.14x, 1.41x and 1.63x in one check, another 0.82x, 0.85x and 0.74x
    /// against a 2-pass baseline of 0.53x: docs/performance.md). Equal to ``maximumFactor`` while
    /// the baseline has too few passes to tell a row's spread.
    static let minimumFactor = 1.7
    /// The largest limit, as a factor of the baseline ratio: a 2x regression stays above it.
    static let maximumFactor = 1.7

    static func read(from url: URL) throws -> Baseline {
        try JSONDecoder().decode(Baseline.self, from: Data(contentsOf: url))
    }

    func write(to url: URL) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try (encoder.encode(self) + Data("\n".utf8)).write(to: url, options: .atomic)
    }
}

extension WorkloadResult {
    /// Per row, FlatCache / SQLite: the median of the rounds' ratios, each round's
    /// two timings taken side by side, so a slow spell of the machine hits both.
    var guardRatios: [(row: String, ratio: Double)] {
        Operation.allCases.flatMap { operation in
            (operation.writes ? [false, true] : [false]).compactMap { durable -> (String, Double)? in
                guard let row = timings[.init(operation: operation, durable: durable)],
                    let mine = row[.flatCache]?.seconds, let theirs = row[.sqlite]?.seconds, !mine.isEmpty
                else { return nil }
                let ratios = zip(mine, theirs).map { $0 / $1 }
                return (operation.rowName(durable: durable), Samples(seconds: ratios).median)
            }
        }
    }
}
