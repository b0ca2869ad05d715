import ArgumentParser
import BenchmarkKit
import Foundation

/// `flatcache-bench search`: issue 34's table, FlatCache's search against
/// SQLite FTS5 (GRDB) over the same messages, workloads S and L.
struct SearchRun: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "search",
        abstract: "Time FlatCache's search against SQLite FTS5 (GRDB) over the same messages, on workloads S and L.",
        discussion: """
            Rows: query latency (p50, p95), indexing everything from scratch, one new message and one change log \
            until a search sees them, index bytes on disk, and peak memory while indexing (a fresh process each). \
            The messages are the workload's, their text from a seeded multilingual generator (SearchText).
            """)

    @Option(help: "Measured rounds, after one warm-up round (the rows of one write run 3 times as many).")
    var rounds = 5

    @Option(help: "Run only this workload: S or L. (default: both)")
    var workload: String?

    @Flag(help: "Exit with status 1 when a target is missed.")
    var checkTargets = false

    @Option(help: "Where to put the stores. (default: a new temporary folder, removed afterwards)")
    var scratch: String?

    func validate() throws {
        if rounds < 1 { throw ValidationError("Please give --rounds a number of at least 1.") }
        if let workload, !["S", "L"].contains(workload) { throw ValidationError("Please give --workload S or L.") }
    }

    func run() throws {
        let root = scratch.map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("flatcache-bench-search-\(getpid())")
        defer { if scratch == nil { try? FileManager.default.removeItem(at: root) } }
        let names = workload.map { [$0] } ?? ["S", "L"]
        var targets = [Report.Target]()
        print(Report.machine(rounds: rounds))
        print(try FTS5SearchSystem.sqliteDescription() + " (the `trigram` tokenizer needs 3.34 or later).\n")
        for name in names {
            progress("[search \(name)] making the data set")
            let workload = (name == "L" ? Workload.large() : Workload.small()).withSearchText()
            let result = try SearchRuns(workload: workload, folder: root.appendingPathComponent(name), rounds: rounds).measure()
            print(result.markdown.joined(separator: "\n"))
            targets += result.targets
        }
        print("## Targets\n")
        for target in targets {
            print("- \(target.met ? "met" : "MISSED"): \(target.text): \(String(format: "%.2f", target.measured))")
        }
        if checkTargets && !targets.allSatisfy(\.met) { throw ExitCode(1) }
    }
}
