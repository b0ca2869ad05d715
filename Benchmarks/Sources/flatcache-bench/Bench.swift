import ArgumentParser
import BenchmarkKit
import FlatCache
import Foundation

/// The FlatCache benchmark: FlatCache, SQLite through GRDB and the hand-written
/// guide version on the same data in one run, next to the machine's limits.
@main
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "flatcache-bench",
        abstract: "Compare FlatCache with SQLite (GRDB) and a hand-written cache, next to the machine's limits.",
        subcommands: [Run.self, MatrixRun.self, OutboxRun.self, EncryptionRun.self],
        defaultSubcommand: Run.self)
}

struct Run: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run", abstract: "Run every workload and print the report as Markdown.")

    @Flag(help: "Workload S only, 3 rounds: under a minute.")
    var quick = false

    @Option(help: "Measured rounds per operation, after one warm-up round. (default: 5, or 3 with --quick)")
    var rounds: Int?

    @Option(help: "Run only this workload: S or L. (default: both, or S with --quick)")
    var workload: String?

    @Flag(help: "Exit with status 1 when a target is missed.")
    var checkTargets = false

    @Option(help: "Where to put the caches. (default: a new temporary folder, removed afterwards)")
    var scratch: String?

    func validate() throws {
        if let rounds, rounds < 1 { throw ValidationError("Please give --rounds a number of at least 1.") }
        if let workload, !["S", "L"].contains(workload) { throw ValidationError("Please give --workload S or L.") }
    }

    func run() throws {
        let rounds = rounds ?? (quick ? 3 : 5)
        let root = scratch.map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("flatcache-bench-\(getpid())")
        defer { if scratch == nil { try? FileManager.default.removeItem(at: root) } }

        var report = Report(rounds: rounds)
        report.codec = CodecComparison.measure(Workload.small())
        let chosen = workload.map { [$0 == "L" ? Workload.large() : Workload.small()] }
        for workload in chosen ?? (quick ? [Workload.small()] : [Workload.small(), Workload.large()]) {
            let folder = root.appendingPathComponent(workload.name)
            try? FileManager.default.removeItem(at: folder)
            report.workloads.append(try WorkloadRun(workload: workload, folder: folder, rounds: rounds).measure())
        }
        report.outbox = try OutboxRuns(workload: .small(), scratch: root.appendingPathComponent("outbox"), rounds: rounds).measure()
        print(report.markdown)
        if checkTargets && !report.allTargetsMet { throw ExitCode(1) }
    }
}

/// Progress for long work, on standard error.
func progress(_ line: String) {
    FileHandle.standardError.write(Data("\(line)\n".utf8))
}
