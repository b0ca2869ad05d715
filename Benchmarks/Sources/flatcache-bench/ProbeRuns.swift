import BenchmarkKit
import Foundation

/// Runs the probe on each system's folder and parses what it prints.
enum ProbeRuns {
    struct Result {
        var baseline = 0
        var peak = 0
        var mallocs = -1
        var mallocBytes = -1
        /// Messages the search probe's index holds; -1 from the other probes.
        var messages = -1
    }

    /// The interposer library built beside this executable, if any.
    static var interposerLibrary: String? {
        let folder = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        let library = folder.appendingPathComponent("libMallocInterposerSwift.so").path
        return FileManager.default.fileExists(atPath: library) ? library : nil
    }

    /// What a probe run measures.
    enum Operation: String { case load, resave }

    /// The probe program built beside this executable.
    static var probe: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent().appendingPathComponent("flatcache-bench-probe")
    }

    static func measure(
        _ operation: Operation, system: SystemKind, folder: URL, workload: String, countAllocations: Bool
    ) throws -> Result {
        try run([operation.rawValue, system.rawValue, folder.path, workload], countAllocations: countAllocations)
    }

    /// Runs the probe with `arguments` and reads what it prints.
    static func run(_ arguments: [String], countAllocations: Bool) throws -> Result {
        let process = Process()
        process.executableURL = probe
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        if countAllocations, let library = interposerLibrary { environment["LD_PRELOAD"] = library }
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        var result = Result()
        for field in text.split(whereSeparator: \.isWhitespace) {
            let parts = field.split(separator: "=")
            guard parts.count == 2, let value = Int(parts[1]) else { continue }
            switch parts[0] {
            case "baseline": result.baseline = value
            case "peak": result.peak = value
            case "mallocs": result.mallocs = value
            case "mallocBytes": result.mallocBytes = value
            case "messages": result.messages = value
            default: break
            }
        }
        return result
    }
}
