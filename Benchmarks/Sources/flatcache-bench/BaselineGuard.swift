import BenchmarkKit
import Foundation

/// The regression guard: FlatCache against SQLite on the main table's rows (both
/// durabilities, nothing else), each row's ratio compared with the committed baseline.
struct BaselineGuard {
    let workloads: [Workload]
    let rounds: Int
    let scratch: URL

    /// One pass over one workload: every guarded row, `rounds` rounds after a warm-up, systems interleaved.
    func pass(_ workload: Workload, number: Int, selection: RunSelection = .guardRows) throws -> WorkloadResult {
        let folder = scratch.appendingPathComponent("\(workload.name)-guard-\(number)")
        try? FileManager.default.removeItem(at: folder)
        defer { try? FileManager.default.removeItem(at: folder) }
        progress("[\(workload.name)] guard pass \(number)")
        return try WorkloadRun(workload: workload, folder: folder, rounds: rounds, selection: selection).measure()
    }

    /// Runs `passes` passes of every workload, the workloads taking turns, and makes
    /// the baseline from them: per row, the median ratio and a limit from their spread.
    /// Returns it with the last pass of each workload, for the report.
    func record(passes: Int, reason: String, command: String) throws -> (Baseline, [WorkloadResult]) {
        // The commit measured: the work tree as the run starts, not as it ends an hour later.
        let commit = Self.commit()
        var ratios = [String: [String: [Double]]]()
        var order = [String: [String]]()
        var last = [String: WorkloadResult]()
        for number in 1...passes {
            for workload in workloads {
                let result = try pass(workload, number: number)
                // Each pass's ratios as they come, so a long recording shows its spread before it ends.
                progress(result.guardRatios.map { "[\(workload.name)] pass \(number): \($0.row): " + String(format: "%.2fx", $0.ratio) }
                    .joined(separator: "\n"))
                for (row, ratio) in result.guardRatios {
                    if ratios[workload.name, default: [:]][row] == nil { order[workload.name, default: []].append(row) }
                    ratios[workload.name, default: [:]][row, default: []].append(ratio)
                }
                last[workload.name] = result
            }
        }
        var baseline = Baseline(
            reason: reason, command: command, commit: commit, recorded: ISO8601DateFormatter().string(from: Date()),
            rounds: rounds, workloads: [:])
        for workload in workloads {
            baseline.workloads[workload.name] = order[workload.name, default: []].map { row in
                let passes = ratios[workload.name]?[row] ?? []
                let ratio = Samples(seconds: passes).median
                return Baseline.Row(row: row, ratio: ratio, limit: Baseline.limit(ratio: ratio, passes: passes), passes: passes)
            }
        }
        return (baseline, workloads.compactMap { last[$0.name] })
    }

    /// One row's outcome in a check.
    struct Verdict {
        let workload: String
        let row: String
        let baseline: Double?
        let limit: Double?
        /// The first pass's ratio, then the re-measures' when the first was over the limit.
        let now: Double?
        let again: [Double]
        /// Whether the baseline's passes of the row spread past the usual limit (``Baseline/isUnsteady(ratio:passes:)``).
        var unsteady = false

        /// A row fails when every measurement of it is over its limit, or when it was not measured.
        var failed: Bool {
            guard let limit else { return false }
            guard let now else { return true }
            return ([now] + again).allSatisfy { $0 > limit }
        }

        var text: String {
            if limit == nil { return "new row, no baseline" }
            if now == nil { return "FAILED: not measured" }
            if failed { return "FAILED: worse than its limit " + (again.isEmpty ? "" : "\(again.count + 1) times of \(again.count + 1)") }
            return again.isEmpty ? "ok" : "ok on re-measure"
        }

        var markdown: String {
            func ratio(_ value: Double?) -> String { value.map { String(format: "%.2fx", $0) } ?? "–" }
            let measured = ([ratio(now)] + again.map(ratio)).joined(separator: " → ")
            let limitText = ratio(limit) + (unsteady ? " (unsteady)" : "")
            return "| \(workload) | \(row) | \(ratio(baseline)) | \(measured) | \(limitText) | \(text) |"
        }
    }

    /// How many times a row over its limit is measured again before it fails.
    static let remeasures = 2

    /// One pass of every workload against `baseline`. A row over its limit is measured
    /// again, up to ``remeasures`` times (only the rows over it, after the cold save their
    /// stores need), each time in a fresh process (``remeasure(_:rows:number:)``), and fails
    /// only when every measurement is over its limit.
    func check(against baseline: Baseline) throws -> ([Verdict], [WorkloadResult]) {
        var verdicts = [Verdict]()
        var results = [WorkloadResult]()
        for workload in workloads {
            guard let rows = baseline.workloads[workload.name] else {
                throw BenchmarkError("The baseline has no workload \(workload.name): record it with --record-baseline.")
            }
            let result = try pass(workload, number: 1)
            results.append(result)
            let now = Dictionary(result.guardRatios, uniquingKeysWith: { first, _ in first })
            var again = [String: [Double]]()
            var suspects = rows.filter { row in now[row.row].map { $0 > row.limit } ?? false }
            for number in 0..<Self.remeasures where !suspects.isEmpty {
                progress("[\(workload.name)] over the limit, measuring again in a fresh process: "
                    + suspects.map(\.row).joined(separator: "; "))
                let names = Set(suspects.map(\.row))
                for (row, ratio) in try remeasure(workload, rows: names, number: number + 2) {
                    again[row, default: []].append(ratio)
                }
                suspects = suspects.filter { row in again[row.row]?.last.map { $0 > row.limit } ?? true }
            }
            for row in rows {
                verdicts.append(Verdict(
                    workload: workload.name, row: row.row, baseline: row.ratio, limit: row.limit, now: now[row.row],
                    again: again[row.row] ?? [], unsteady: Baseline.isUnsteady(ratio: row.ratio, passes: row.passes)))
            }
            for (row, ratio) in result.guardRatios where !rows.contains(where: { $0.row == row }) {
                verdicts.append(Verdict(workload: workload.name, row: row, baseline: nil, limit: nil, now: ratio, again: []))
            }
        }
        return (verdicts, results)
    }

    /// The guard's rows named `rows` alone (with the cold save their stores need, untimed).
    static func selection(of rows: Set<String>) -> RunSelection {
        var selection = RunSelection.guardRows
        var operations = Set<Operation>()
        var durabilities = Set<Bool>()
        for operation in selection.operations {
            // A read's row has one name for both durabilities, and is measured with durability off only:
            // selected with it on too, it cost a re-measure a durable cold save and a 36 s wait for nothing.
            let measured = operation.writes ? [false, true] : [false]
            for durable in measured where rows.contains(operation.rowName(durable: durable)) {
                operations.insert(operation)
                durabilities.insert(durable)
            }
        }
        selection.operations = operations
        selection.durabilities = [false, true].filter(durabilities.contains)
        return selection
    }

    /// The guard's table, as Markdown.
    static func markdown(_ verdicts: [Verdict], baseline: Baseline, file: String) -> [String] {
        var out = ["## Regression guard: FlatCache / SQLite against \(file)\n"]
        out.append("Baseline: commit \(baseline.commit), \(baseline.recorded), `\(baseline.command)`: \(baseline.reason)\n")
        out.append("Each ratio is the median of \(baseline.rounds) rounds' FlatCache / SQLite; a row over its limit "
            + "is measured again, up to \(remeasures) times, each in a fresh process, and fails only when every "
            + "measurement is over its limit.\n")
        out.append("| workload | row | baseline | now | limit | verdict |")
        out.append("|---|---|---|---|---|---|")
        out.append(contentsOf: verdicts.map(\.markdown))
        let failed = verdicts.filter(\.failed).count
        out.append("")
        out.append(failed == 0
            ? "Guard passed: \(verdicts.count) rows, none worse than its limit."
            : "Guard FAILED: \(failed) of \(verdicts.count) rows worse than their limit.")
        return out
    }

    /// The baseline's rows, as Markdown, after a recording.
    static func markdown(recorded baseline: Baseline, file: String) -> [String] {
        var out = ["## Regression guard: baseline recorded into \(file)\n"]
        out.append("| workload | row | passes | baseline | limit |")
        out.append("|---|---|---|---|---|")
        for name in baseline.workloads.keys.sorted(by: { $0.count < $1.count || ($0.count == $1.count && $0 < $1) }) {
            for row in baseline.workloads[name] ?? [] {
                let passes = row.passes.map { String(format: "%.2f", $0) }.joined(separator: ", ")
                let unsteady = Baseline.isUnsteady(ratio: row.ratio, passes: row.passes) ? " (unsteady)" : ""
                out.append("| \(name) | \(row.row) | \(passes) | " + String(format: "%.2fx | %.2fx", row.ratio, row.limit) + unsteady + " |")
            }
        }
        return out
    }

    /// The commit of the work tree the benchmark was built from, "+changes" when it has uncommitted changes.
    static func commit() -> String {
        func git(_ arguments: [String]) -> String {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = ["git"] + arguments
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = FileHandle.nullDevice
            guard (try? process.run()) != nil else { return "" }
            let output = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let head = git(["rev-parse", "--short", "HEAD"])
        guard !head.isEmpty else { return "unknown" }
        return git(["status", "--porcelain", "--untracked-files=no"]).isEmpty ? head : head + "+changes"
    }
}
