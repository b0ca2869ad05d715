import ArgumentParser
import BenchmarkKit
import Foundation

/// One re-measure of the regression guard, in a process of its own: `--check-baseline`
/// launches it for the rows over their limit (``BaselineGuard/remeasure(_:rows:number:)``),
/// so that a slow mode lasting a whole process cannot fail every measurement of a row.
/// Internal to the guard, so hidden from the help.
///
/// It runs the same pass as the guard (``BaselineGuard/pass(_:number:selection:)`` with
/// ``BaselineGuard/selection(of:)``) in its own folder under `--scratch`, and prints an
/// ``Output`` as one line of JSON, last, on standard output; progress goes to standard error.
struct GuardRemeasure: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "guard-remeasure",
        abstract: "Measure some of the regression guard's rows of one workload and print their ratios as JSON.",
        shouldDisplay: false)

    /// What the parent reads back.
    struct Output: Codable {
        /// Per row asked for, FlatCache / SQLite (``WorkloadResult/guardRatios``).
        let ratios: [String: Double]
        /// Seconds since this process's last cold save deleted its rounds' folders, for the next pass to wait on.
        let secondsSinceMassDeletion: Double?
    }

    @Option(help: "The workload: S or L.")
    var workload: String

    @Option(name: .customLong("row"), help: "A guard row, named as in the baseline; repeat it for several.")
    var rows: [String]

    @Option(help: "Measured rounds per operation, after one warm-up round.")
    var rounds: Int

    @Option(help: "The folder to make this pass's own folder in (<workload>-guard-<pass>, removed afterwards).")
    var scratch: String

    @Option(help: "The pass's number in the check, which names its folder.")
    var pass: Int

    @Option(help: "Seconds since the parent's last cold save deleted its rounds' folders.")
    var secondsSinceMassDeletion: Double?

    func validate() throws {
        if !["S", "L"].contains(workload) { throw ValidationError("Please give --workload S or L.") }
        if rounds < 1 { throw ValidationError("Please give --rounds a number of at least 1.") }
        if rows.isEmpty { throw ValidationError("Please give at least one --row.") }
        let known = Set(RunSelection.guardRows.operations.flatMap { operation in
            (operation.writes ? [false, true] : [false]).map { operation.rowName(durable: $0) }
        })
        if let unknown = rows.first(where: { !known.contains($0) }) {
            throw ValidationError("Please give --row a guard row's name: '\(unknown)' is none.")
        }
    }

    func run() throws {
        guard let chosen = Workload.named(workload) else { return }
        // The parent's cold save may have deleted many files moments ago: wait as it would have.
        if let secondsSinceMassDeletion { WorkloadRun.secondsSinceMassDeletion = secondsSinceMassDeletion }
        let names = Set(rows)
        let guardRun = BaselineGuard(workloads: [chosen], rounds: rounds, scratch: URL(fileURLWithPath: scratch))
        let result = try guardRun.pass(chosen, number: pass, selection: BaselineGuard.selection(of: names))
        let ratios = result.guardRatios.filter { names.contains($0.row) }
        let output = Output(
            ratios: Dictionary(ratios, uniquingKeysWith: { first, _ in first }),
            secondsSinceMassDeletion: WorkloadRun.secondsSinceMassDeletion)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        print(String(decoding: try encoder.encode(output), as: UTF8.self))
    }
}
