import BenchmarkKit
import Foundation

extension BaselineGuard {
    /// Measures `rows` of `workload` again as pass `number`, in a fresh child process of this
    /// program (``GuardRemeasure``): a slow mode that lasts a whole process (S's open +
    /// channel list, docs/performance.md) then cannot fail every measurement, while a real
    /// regression still does. The child's progress goes to this process's standard error.
    ///
    /// - Returns: Each row's FlatCache / SQLite ratio.
    /// - Throws: `BenchmarkError` when the child cannot start, fails, or prints no ratio
    ///   for a row: never a silent pass.
    func remeasure(_ workload: Workload, rows: Set<String>, number: Int) throws -> [String: Double] {
        var arguments = [
            "guard-remeasure", "--workload", workload.name, "--rounds", "\(rounds)",
            "--scratch", scratch.path, "--pass", "\(number)",
        ]
        arguments += rows.sorted().flatMap { ["--row", $0] }
        if let seconds = WorkloadRun.secondsSinceMassDeletion {
            arguments += ["--seconds-since-mass-deletion", "\(seconds)"]
        }
        let process = Process()
        process.executableURL = Self.executable
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.standardError
        let described = "pass \(number) of \(workload.name) in a child process (\(Self.executable.path) "
            + arguments.map { $0.contains(" ") ? "'\($0)'" : $0 }.joined(separator: " ") + ")"
        do { try process.run() } catch {
            throw BenchmarkError("The guard could not start its re-measure, \(described): \(error)")
        }
        progress("[\(workload.name)] guard pass \(number) runs in child process \(process.processIdentifier)")
        // Read to the end before waiting: a child blocked on a full pipe would never exit.
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            let how = process.terminationReason == .exit
                ? "exited with status \(process.terminationStatus)" : "was killed by signal \(process.terminationStatus)"
            throw BenchmarkError("The guard's re-measure, \(described), \(how) (its standard error is above).")
        }
        let text = String(decoding: data, as: UTF8.self)
        let lines = text.split(separator: "\n")
        // The answer is the last line; anything before it (a log line) goes to standard error, not into the report.
        for line in lines.dropLast() { progress(String(line)) }
        guard let last = lines.last,
            let answer = try? JSONDecoder().decode(GuardRemeasure.Output.self, from: Data(last.utf8))
        else {
            throw BenchmarkError("The guard's re-measure, \(described), printed no ratios: \(text.debugDescription)")
        }
        let missing = rows.subtracting(answer.ratios.keys)
        guard missing.isEmpty else {
            throw BenchmarkError(
                "The guard's re-measure, \(described), measured no ratio for: " + missing.sorted().joined(separator: "; "))
        }
        // The child's cold save deleted files too: the next pass waits on that.
        if let seconds = answer.secondsSinceMassDeletion { WorkloadRun.secondsSinceMassDeletion = seconds }
        return answer.ratios.filter { rows.contains($0.key) }
    }

    /// This program's own file. On Linux, the file `/proc/self/exe` names (so `ps` shows it),
    /// or that link itself when the file was replaced since (a rebuild): it still runs this
    /// very build. Elsewhere, the file it was started from.
    static var executable: URL {
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            return URL(fileURLWithPath: path.hasSuffix(" (deleted)") ? "/proc/self/exe" : path)
        }
        return Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
    }
}
