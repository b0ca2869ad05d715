import ArgumentParser
import BenchmarkKit
import FlatCache
import Foundation

/// FlatCache with `Configuration.encryption` on against the same FlatCache
/// without it, on the same workload in the same run: what sealing every
/// record costs (issue 25: each ratio encrypted / plain <= 1.3).
struct EncryptionResult {
    /// The operations compared, in the order they run (the re-save before
    /// the upserts, which change what an unchanged re-save would hold).
    static let operations: [Operation] = [.resave, .load, .pagesCold, .upsert]

    /// The largest encrypted / plain ratio each operation may show.
    static let limit = 1.3

    /// Per operation, the plain (`false`) and encrypted (`true`) timings, rounds interleaved.
    var samples = [Operation: [Bool: Samples]]()

    /// Encrypted median / plain median of `operation`.
    func ratio(_ operation: Operation) -> Double? {
        guard let plain = samples[operation]?[false]?.median, let sealed = samples[operation]?[true]?.median
        else { return nil }
        return sealed / plain
    }

    /// One target per operation: the ratio at most ``limit``.
    func targets(workload name: String) -> [Report.Target] {
        Self.operations.compactMap { operation in
            ratio(operation).map { value in
                Report.Target(
                    text: "\(name): \(operation.rawValue)\(Self.suffix(operation)), encrypted / plain FlatCache <= \(Self.limit)",
                    measured: value, limit: Self.limit, atLeast: false)
            }
        }
    }

    /// The main table's rounds (each row here ran ``EncryptionRuns/roundsFactor`` times as many).
    var rounds = 0

    func markdown(workload name: String) -> [String] {
        var out = ["\n### \(name): encryption at rest (AES-256-GCM), FlatCache with and without (durability off)\n"]
        out.append("| operation | FlatCache, plain | FlatCache, encrypted | encrypted / plain |")
        out.append("|---|---|---|---|")
        for operation in Self.operations {
            guard let row = samples[operation], let plain = row[false], let sealed = row[true] else { continue }
            out.append("| \(operation.rawValue)\(Self.suffix(operation)) | \(plain.summary) | \(sealed.summary) | "
                + String(format: "%.2fx", sealed.median / plain.median) + " |")
        }
        out.append("")
        out.append("Medians of \(rounds * EncryptionRuns.roundsFactor) rounds after 1 warm-up. Both folders are fresh, "
            + "saved untimed before the first row, the encrypted one with one random key for the whole run; "
            + "the two configurations alternate round by round.")
        return out
    }

    private static func suffix(_ operation: Operation) -> String { operation.writes ? ", fast" : "" }
}

/// Measures ``EncryptionResult`` on two fresh FlatCache folders in `scratch`
/// (durability off, no retention cut, as the main table's FlatCache).
struct EncryptionRuns {
    let workload: Workload
    /// Emptied first.
    let scratch: URL
    /// The main table's rounds: each row here runs ``roundsFactor`` times as many.
    let rounds: Int

    /// The rows of workload S take milliseconds and their ratios are the
    /// target: more rounds steady the medians at a few seconds' cost.
    static let roundsFactor = 3

    func measure() throws -> EncryptionResult {
        let rounds = rounds * Self.roundsFactor
        try? FileManager.default.removeItem(at: scratch)
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        let encryption = Encryption.aes256gcm(key: Encryption.randomKey())
        var systems = [Bool: FlatCacheSystem]()
        for encrypted in [false, true] {
            let folder = scratch.appendingPathComponent(encrypted ? "encrypted" : "plain")
            let system = try FlatCacheSystem(
                folder: folder, durable: false, messageLimit: nil, encryption: encrypted ? encryption : nil)
            try system.saveEverything(workload)
            systems[encrypted] = system
        }
        func system(_ encrypted: Bool) -> FlatCacheSystem { systems[encrypted]! }  // both opened above

        let name = workload.name
        let both = [false, true]
        var result = EncryptionResult(rounds: self.rounds)
        progress("[\(name)] encryption: re-save unchanged, \(rounds) rounds")
        result.samples[.resave] = try interleaved(both, warmUp: 1, rounds: rounds) { encrypted, _ in
            try system(encrypted).saveEverything(workload)
        }

        progress("[\(name)] encryption: load every channel, cold")
        let urls = workload.channelURLs
        result.samples[.load] = try interleaved(
            both, warmUp: 1, rounds: rounds, prepare: { encrypted, _ in try system(encrypted).reopen() }
        ) { encrypted, _ in
            let count = try system(encrypted).loadEveryChannel(urls)
            guard count == workload.messageCount else {
                throw BenchmarkError("encrypted \(encrypted): loaded \(count) messages, expected \(workload.messageCount)")
            }
        }

        progress("[\(name)] encryption: page of 30, first touch")
        let queries = workload.firstTouchPageQueries
        var counts = [Bool: Int]()
        result.samples[.pagesCold] = try interleaved(
            both, warmUp: 1, rounds: rounds, prepare: { encrypted, _ in try system(encrypted).reopen() }
        ) { encrypted, _ in counts[encrypted] = try system(encrypted).loadPages(queries) }
        guard counts[false] == counts[true] else { throw BenchmarkError("Encrypted pages differ: \(counts)") }

        progress("[\(name)] encryption: upsert")
        var upserts = [ChatMessage]()
        result.samples[.upsert] = try interleaved(
            both, warmUp: 1, rounds: rounds, prepare: { _, round in upserts = workload.upserts(round: round) }
        ) { encrypted, _ in try system(encrypted).upsert(upserts) }
        return result
    }
}

/// `flatcache-bench encryption`: the encryption rows alone, with their targets.
struct EncryptionRun: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "encryption",
        abstract: "Time FlatCache with encryption at rest against FlatCache without, on workloads S and L.")

    @Option(help: "Rounds, as the main run counts them (each row runs \(EncryptionRuns.roundsFactor) times as many).")
    var rounds = 3

    @Option(help: "Run only this workload: S or L. (default: both)")
    var workload: String?

    @Flag(help: "Exit with status 1 when a target is missed.")
    var checkTargets = false

    func validate() throws {
        if rounds < 1 { throw ValidationError("Please give --rounds a number of at least 1.") }
        if let workload, !["S", "L"].contains(workload) { throw ValidationError("Please give --workload S or L.") }
    }

    func run() throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("flatcache-bench-encryption-\(getpid())")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let workloads = workload.map { [$0 == "L" ? Workload.large() : Workload.small()] } ?? [.small(), .large()]
        var targets = [Report.Target]()
        print(Report.machine(rounds: rounds * EncryptionRuns.roundsFactor))
        for workload in workloads {
            let result = try EncryptionRuns(
                workload: workload, scratch: scratch.appendingPathComponent(workload.name), rounds: rounds
            ).measure()
            print(result.markdown(workload: workload.name).joined(separator: "\n"))
            targets += result.targets(workload: workload.name)
        }
        print("\n## Targets\n")
        for target in targets {
            print("- \(target.met ? "met" : "MISSED"): \(target.text): \(String(format: "%.2f", target.measured))")
        }
        if checkTargets && !targets.allSatisfy(\.met) { throw ExitCode(1) }
    }
}
