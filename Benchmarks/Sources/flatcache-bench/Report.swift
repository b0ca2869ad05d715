import BenchmarkKit
import Foundation

/// The whole run as Markdown: machine, tables with ratios, limits, memory, targets.
struct Report {
    let rounds: Int
    var codec = CodecComparison()
    var workloads = [WorkloadResult]()
    /// Issue 23's outbox row, when it ran.
    var outbox: OutboxResult?

    /// One target, checked on one measurement.
    struct Target {
        let text: String
        let measured: Double
        let limit: Double
        let atLeast: Bool
        var met: Bool { atLeast ? measured >= limit : measured <= limit }
    }

    var targets: [Target] {
        workloadTargets + [outbox?.target].compactMap { $0 }
    }

    /// Issue 32's targets, FlatCache / SQLite (GRDB) with durability off, on
    /// every workload run (S and L); the older lists (issue 9's against the
    /// hand-written cache and the machine's limits, issue 10's for change
    /// logs and durable writes) are superseded: docs/performance.md, "Targets".
    static let sqliteTargets: [(Operation, Double)] = [
        (.resave, 0.4), (.load, 1.25), (.upsert, 0.5), (.burst, 0.2), (.coldSave, 0.5),
        (.pagesCold, 1.5), (.pagesWarm, 0.1), (.openList, 0.5), (.loadAgain, 0.05),
    ]

    /// Issue 33's targets (format 2), FlatCache / SQLite (GRDB) on every
    /// workload run: time, by durability, and bytes written (either durability,
    /// the durable rows' figures).
    static let formatTwoTargets: [(Operation, durable: Bool, Double)] = [
        (.changeLog, false, 1.0), (.changeLog, true, 1.5), (.upsert, true, 1.0), (.burst, true, 0.3),
    ]
    static let formatTwoByteTargets: [(Operation, Double)] = [(.changeLog, 2.0), (.upsert, 2.0)]

    /// Peak RSS loading every channel of L, FlatCache / SQLite (GRDB).
    static let peakMemoryTarget = 2.0

    private var workloadTargets: [Target] {
        workloads.flatMap { result -> [Target] in
            let name = result.workload.name
            var targets = [Target]()
            for (operation, limit) in Self.sqliteTargets {
                guard let row = result.timings[.init(operation: operation, durable: false)],
                    let mine = row[.flatCache]?.median, let theirs = row[.sqlite]?.median
                else { continue }
                let suffix = operation.writes ? ", durability off" : ""
                targets.append(Target(
                    text: "\(name): \(operation.rawValue)\(suffix), FlatCache / SQLite (GRDB) <= \(limit)",
                    measured: mine / theirs, limit: limit, atLeast: false))
            }
            for (operation, durable, limit) in Self.formatTwoTargets {
                guard let row = result.timings[.init(operation: operation, durable: durable)],
                    let mine = row[.flatCache]?.median, let theirs = row[.sqlite]?.median
                else { continue }
                targets.append(Target(
                    text: "\(name): \(operation.rawValue), durability \(durable ? "on" : "off"), FlatCache / SQLite (GRDB) <= \(limit)",
                    measured: mine / theirs, limit: limit, atLeast: false))
            }
            for (operation, limit) in Self.formatTwoByteTargets {
                guard let row = result.timings[.init(operation: operation, durable: true)],
                    let mine = row[.flatCache]?.medianBytesWritten, let theirs = row[.sqlite]?.medianBytesWritten, theirs > 0
                else { continue }
                targets.append(Target(
                    text: "\(name): bytes written, \(operation.rawValue), durability on, FlatCache / SQLite (GRDB) <= \(limit)",
                    measured: Double(mine) / Double(theirs), limit: limit, atLeast: false))
            }
            if name == "L", let mine = result.memory[.flatCache]?.peak, let theirs = result.memory[.sqlite]?.peak, theirs > 0 {
                targets.append(Target(
                    text: "\(name): peak RSS loading every channel (default memory budget), FlatCache / SQLite (GRDB) <= \(Self.peakMemoryTarget)",
                    measured: Double(mine) / Double(theirs), limit: Self.peakMemoryTarget, atLeast: false))
            }
            return targets + (result.encryption?.targets(workload: name) ?? [])
        }
    }

    var allTargetsMet: Bool { targets.allSatisfy(\.met) }

    /// Whether the report ends with the targets (the full run); the guard and XL runs have none.
    var showsTargets = true

    var markdown: String {
        var out = [Self.machine(rounds: rounds)]
        for result in workloads { out.append(contentsOf: table(result)) }
        out.append(contentsOf: codecTable)
        out.append(contentsOf: outbox?.markdown ?? [])
        guard showsTargets else { return out.joined(separator: "\n") }
        out.append("## Targets\n")
        for target in targets {
            out.append("- \(target.met ? "met" : "MISSED"): \(target.text): \(String(format: "%.2f", target.measured))")
        }
        return out.joined(separator: "\n")
    }

    /// The "Machine" section: cores, memory, CPU, system, and how figures are taken.
    static func machine(rounds: Int) -> String {
        "## Machine\n\n\(ProcessInfo.processInfo.activeProcessorCount) cores, "
            + "\(ProcessInfo.processInfo.physicalMemory / 1_073_741_824) GiB, \(cpuName), "
            + "\(ProcessInfo.processInfo.operatingSystemVersionString). Medians of \(rounds) rounds after 1 warm-up "
            + "(min–max in brackets), systems interleaved round by round.\n"
    }

    private func table(_ result: WorkloadResult) -> [String] {
        let w = result.workload
        var out = ["## Workload \(w.name): \(w.channels.count) channels x \(w.messageCount / max(1, w.channels.count)) messages\n"]
        out.append("\(w.messageCount) messages; FlatCache's message files hold \(Self.megabytes(result.linesBytes)).\n")
        out.append("| operation | durability | FlatCache | SQLite (GRDB) | hand-written | FlatCache / SQLite | FlatCache / hand-written |")
        out.append("|---|---|---|---|---|---|---|")
        for operation in Operation.allCases {
            for durable in operation.writes ? [false, true] : [false] {
                guard let row = result.timings[.init(operation: operation, durable: durable)], !row.isEmpty else { continue }
                let cells = SystemKind.allCases.map { row[$0]?.summary ?? "–" }
                let mine = row[.flatCache]?.median ?? .nan
                let ratios = [SystemKind.sqlite, .handWritten].map { other in
                    row[other].map { String(format: "%.2fx", mine / $0.median) } ?? "–"
                }
                let durability = operation.writes ? (durable ? "on" : "off") : "–"
                out.append("| \(operation.rawValue) | \(durability) | " + (cells + ratios).joined(separator: " | ") + " |")
            }
        }
        out.append(contentsOf: bytesWrittenTable(result))
        out.append(contentsOf: policyTable(result))
        out.append(contentsOf: result.collections?.markdown(workload: w.name) ?? [])
        out.append(contentsOf: result.encryption?.markdown(workload: w.name) ?? [])
        guard !result.engine.isEmpty else { return out + [""] }
        out.append("\n### \(w.name): the limits, on the engine's own files (\(Self.megabytes(result.engineBytes)))\n")
        out.append("| what | time | throughput |")
        out.append("|---|---|---|")
        let rows: [(String, String)] = [
            ("sha256", "SHA256, OpenSSL, one call per file"),
            ("base64 decode", "Base64 decode, OpenSSL, into one buffer"),
            ("base64 encode", "Base64 encode, OpenSSL, into one buffer"),
            ("read files", "read the files from the page cache"),
            ("engine load", "FlatCache engine, pre-serialized records: load every channel"),
            ("engine re-save", "FlatCache engine, pre-serialized records: re-save unchanged"),
        ]
        for (key, label) in rows {
            guard let samples = result.engine[key] else { continue }
            out.append("| \(label) | \(samples.summary) | \(Self.throughput(result.engineBytes, samples.median)) |")
        }
        if let replace = result.limits["durable replace"] {
            out.append("| one durable file replace (100 KB: write, fsync, rename, fsync folder) | \(replace.summary) | |")
        }
        if let pair = result.limits["replace pair"] {
            out.append("| one file and its sidecar replaced, no fsync (\(Self.kilobytes(result.pairBytes)) + 80 B: "
                + "2 temporary files written and renamed), the floor of a rewrite | \(pair.summary) | |")
        }
        out.append("\n### \(w.name): memory and allocations, each in a fresh process (durability off)\n")
        out.append("| system | load every channel: peak RSS | growth while loading | allocations | allocated bytes | re-save unchanged: allocations |")
        out.append("|---|---|---|---|---|---|")
        for kind in SystemKind.allCases {
            guard let memory = result.memory[kind] else { continue }
            let resave = result.resaveAllocations[kind]?.mallocs ?? -1
            out.append("| \(kind.rawValue) | \(Self.megabytes(memory.peak)) | \(Self.megabytes(memory.peak - memory.baseline)) | "
                + "\(Self.count(memory.mallocs)) | \(memory.mallocBytes < 0 ? "n/a" : Self.megabytes(memory.mallocBytes)) | \(Self.count(resave)) |")
        }
        out.append("")
        return out
    }

    /// FlatCache's sweep and preloaded bundle; the other systems have neither and sit these rows out.
    private func policyTable(_ result: WorkloadResult) -> [String] {
        guard let policies = result.policies else { return [] }
        let name = result.workload.name
        func row(_ label: String, _ cell: String) -> String { "| \(label) | \(cell) | – | – |" }
        let without = policies.openWithoutBundle.median
        let with = policies.openWithBundle.median
        let paired = zip(policies.openWithBundle.seconds, policies.openWithoutBundle.seconds).map { $0 - $1 }
        var out = ["\n### \(name): policies (FlatCache only, reported, no target)\n"]
        out.append("| operation | FlatCache | SQLite (GRDB) | hand-written |")
        out.append("|---|---|---|---|")
        out.append(row("open and sweep to half the folder's size", policies.sweep.summary))
        out.append(row("open + load the channel list, seeded folder, no bundle", policies.openWithoutBundle.summary))
        out.append(row("open + load the channel list, with the bundle seeded before", policies.openWithBundle.summary))
        out.append(row("the bundle's cost on open (difference of the medians)", Self.microseconds(with - without)))
        out.append("")
        out.append("Sweep: each round opens a fresh copy of the saved folder (\(Self.megabytes(policies.bytesBefore)), "
            + "\(policies.bytesBefore.formatted()) bytes) with `sizeLimit` \(policies.sizeLimit.formatted()) bytes, "
            + "`sweepTarget` 1; \(Self.range(policies.evicted)) of \(result.workload.channels.count) channels evicted, "
            + "\(Self.range(policies.bytesAfter)) bytes left when `sweep()` returned (checked <= the limit). "
            + "Of those, the explicit `sweep()` evicted \(Self.range(policies.explicitlyEvicted)) "
            + "(the sweep queued at open runs first).")
        out.append("")
        out.append("Bundle: the saved folder; the untimed first open with it: \(policies.seeded). "
            + "Then \(policies.openRounds) rounds, each a pair of opens in alternating order, each open with the bundle "
            + "checked `preload.upToDate == true`; "
            + "the sweep each open queues is waited for between timings (the main table's row leaves it running). "
            + "Per-round differences (with − without): "
            + "median \(Self.microseconds(Samples(seconds: paired).median)), "
            + "\(Self.microseconds(paired.min() ?? .nan)) to \(Self.microseconds(paired.max() ?? .nan)); "
            + "between the fastest rounds: \(Self.microseconds(policies.openWithBundle.min - policies.openWithoutBundle.min)).")
        return out
    }

    private var codecTable: [String] {
        guard !codec.rows.isEmpty else { return [] }
        var out = ["## The record codec alone (per message, workload S)\n"]
        out.append("| codec | encode | decode | bytes |")
        out.append("|---|---|---|---|")
        for row in codec.rows {
            out.append("| \(row.name) | \(row.encode.summary) | \(row.decode.summary) | \(row.averageBytes) |")
        }
        out.append("")
        return out
    }

    static func kilobytes(_ bytes: Int) -> String { String(format: "%.0f KB", Double(bytes) / 1e3) }

    static func megabytes(_ bytes: Int) -> String { String(format: "%.1f MB", Double(bytes) / 1e6) }

    /// A signed difference, such as "+12 µs".
    static func microseconds(_ seconds: Double) -> String {
        let value = (seconds * 1e6).rounded()
        return value == 0 ? "0 µs" : String(format: "%+.0f µs", value)
    }

    /// "51" when every round agrees, else "50–52".
    static func range(_ values: [Int]) -> String {
        guard let low = values.min(), let high = values.max() else { return "n/a" }
        return low == high ? low.formatted() : "\(low.formatted())–\(high.formatted())"
    }

    static func count(_ value: Int) -> String { value < 0 ? "n/a" : value.formatted() }

    static func throughput(_ bytes: Int, _ seconds: Double) -> String {
        String(format: "%.2f GB/s", Double(bytes) / seconds / 1e9)
    }

    static var cpuName: String {
        guard let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
            let line = info.split(separator: "\n").first(where: { $0.hasPrefix("model name") })
        else { return "unknown CPU" }
        return line.split(separator: ":").last.map { $0.trimmingCharacters(in: .whitespaces) } ?? "unknown CPU"
    }
}
