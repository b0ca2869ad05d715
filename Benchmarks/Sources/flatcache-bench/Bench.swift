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
        subcommands: [Run.self, MatrixRun.self, OutboxRun.self, EncryptionRun.self, SearchRun.self, GuardRemeasure.self],
        defaultSubcommand: Run.self)
}

struct Run: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run", abstract: "Run every workload and print the report as Markdown.",
        discussion: """
            --check-baseline and --record-baseline run the regression guard instead of the full report: \
            FlatCache against SQLite (GRDB) on the main table's rows, both durabilities, workloads S and L \
            (or --workload). --record-baseline runs --passes passes and writes each row's median ratio and \
            limit into --baseline. --check-baseline runs one pass, measures a row over its limit again up to \
            twice, each time in a fresh process of this program (so that a slow mode lasting a process \
            cannot fail all three measurements), prints a table (row, baseline, now, limit, verdict) and \
            exits with status 1 when a row is over its limit every time. --workload XL runs the XL rows \
            alone (no targets, no guard).
            """)

    @Flag(help: "Workload S only, 3 rounds: under a minute.")
    var quick = false

    @Option(help: "Measured rounds per operation, after one warm-up round. (default: 5, or 3 with --quick, or 3 for XL; for the guard 7, or the baseline's rounds)")
    var rounds: Int?

    @Option(help: "Run only this workload: S, L, or XL (10,000 channels x 100 messages, its own rows, no targets). (default: S and L, or S with --quick)")
    var workload: String?

    @Flag(help: "Exit with status 1 when a target is missed.")
    var checkTargets = false

    @Flag(help: "Run the regression guard: compare each row's FlatCache / SQLite ratio with --baseline; exit with status 1 when a row is worse than its limit.")
    var checkBaseline = false

    @Flag(help: "Run the regression guard's rows --passes times and write the ratios and limits into --baseline.")
    var recordBaseline = false

    @Option(help: "The guard's baseline file, relative to Benchmarks/.")
    var baseline = "baseline.json"

    @Option(help: "Passes of every workload that --record-baseline measures.")
    var passes = 5

    @Option(help: "Why the baseline is recorded, kept in the file (with --record-baseline).")
    var reason = "not given"

    @Option(help: "Where to put the caches. (default: a new temporary folder, removed afterwards)")
    var scratch: String?

    func validate() throws {
        if let rounds, rounds < 1 { throw ValidationError("Please give --rounds a number of at least 1.") }
        if let workload, !["S", "L", "XL"].contains(workload) { throw ValidationError("Please give --workload S, L or XL.") }
        if passes < 1 { throw ValidationError("Please give --passes a number of at least 1.") }
        if checkBaseline && recordBaseline { throw ValidationError("Please give --check-baseline or --record-baseline, not both.") }
        if (checkBaseline || recordBaseline) && workload == "XL" {
            throw ValidationError("Please guard S or L: XL has no baseline.")
        }
    }

    func run() throws {
        let root = scratch.map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("flatcache-bench-\(getpid())")
        defer { if scratch == nil { try? FileManager.default.removeItem(at: root) } }
        if checkBaseline || recordBaseline { return try runGuard(root: root) }
        if workload == "XL" { return try runExtraLarge(root: root) }

        let rounds = rounds ?? (quick ? 3 : 5)
        var report = Report(rounds: rounds)
        report.codec = CodecComparison.measure(Workload.small())
        let chosen = workload.flatMap(Workload.named).map { [$0] }
        for workload in chosen ?? (quick ? [Workload.small()] : [Workload.small(), Workload.large()]) {
            let folder = root.appendingPathComponent(workload.name)
            try? FileManager.default.removeItem(at: folder)
            report.workloads.append(try WorkloadRun(workload: workload, folder: folder, rounds: rounds).measure())
        }
        report.outbox = try OutboxRuns(workload: .small(), scratch: root.appendingPathComponent("outbox"), rounds: rounds).measure()
        print(report.markdown)
        if checkTargets && !report.allTargetsMet { throw ExitCode(1) }
    }

    /// `--check-baseline` and `--record-baseline`.
    private func runGuard(root: URL) throws {
        let url = URL(fileURLWithPath: baseline)
        // A check runs as many rounds as its baseline's passes did, unless told otherwise.
        let committed = checkBaseline ? try Baseline.read(from: url) : nil
        let chosen = workload.flatMap(Workload.named).map { [$0] } ?? [Workload.small(), Workload.large()]
        let guardRun = BaselineGuard(workloads: chosen, rounds: rounds ?? committed?.rounds ?? 7, scratch: root)
        var report = Report(rounds: guardRun.rounds)
        report.showsTargets = false
        if recordBaseline {
            var command = "Benchmarks/run --record-baseline --passes \(passes) --rounds \(guardRun.rounds)"
            if let workload { command += " --workload \(workload)" }
            var (recorded, results) = try guardRun.record(passes: passes, reason: reason, command: command)
            // Recording one workload keeps the other's rows.
            if workload != nil, let old = try? Baseline.read(from: url) {
                recorded.workloads.merge(old.workloads) { new, _ in new }
            }
            try recorded.write(to: url)
            report.workloads = results
            print(report.markdown)
            print(BaselineGuard.markdown(recorded: recorded, file: baseline).joined(separator: "\n"))
            return
        }
        guard let committed else { return }
        let (verdicts, results) = try guardRun.check(against: committed)
        report.workloads = results
        print(report.markdown)
        print(BaselineGuard.markdown(verdicts, baseline: committed, file: baseline).joined(separator: "\n"))
        if verdicts.contains(where: \.failed) { throw ExitCode(1) }
    }

    /// `--workload XL`: how cost grows, FlatCache against SQLite, reported without targets.
    private func runExtraLarge(root: URL) throws {
        let rounds = rounds ?? 3
        progress("[XL] making the data set")
        let workload = Workload.extraLarge()
        var report = Report(rounds: rounds)
        report.showsTargets = false
        let folder = root.appendingPathComponent(workload.name)
        try? FileManager.default.removeItem(at: folder)
        report.workloads.append(try WorkloadRun(
            workload: workload, folder: folder, rounds: rounds, selection: .extraLarge).measure())
        print(report.markdown)
    }
}

/// Progress for long work, on standard error.
func progress(_ line: String) {
    FileHandle.standardError.write(Data("\(line)\n".utf8))
}
