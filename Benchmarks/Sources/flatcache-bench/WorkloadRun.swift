import BenchmarkKit
import FlatCache
import Foundation

/// What a chat screen does, timed for every system on one workload.
enum Operation: String, CaseIterable, Sendable {
    case coldSave = "cold save of everything"
    case resave = "re-save unchanged"
    case load = "load every channel"
    case upsert = "upsert 1 new message into each channel"
    case changeLog = "change log per channel (5 updated, 2 deleted)"
    case pages = "page of 30 before a timestamp, x1,000"
    case openList = "open + load the channel list"

    /// Operations that write, timed with durability off and on.
    var writes: Bool { [.coldSave, .resave, .upsert, .changeLog].contains(self) }
}

/// The measurements of one workload.
struct WorkloadResult {
    struct Key: Hashable {
        let operation: Operation
        let durable: Bool
    }

    let workload: Workload
    var linesBytes = 0
    var timings = [Key: [SystemKind: Samples]]()
    var limits = [String: Samples]()
    var engineBytes = 0
    var engine = [String: Samples]()
    var memory = [SystemKind: ProbeRuns.Result]()
    var resaveAllocations = [SystemKind: ProbeRuns.Result]()
}

struct WorkloadRun {
    let workload: Workload
    let folder: URL
    let rounds: Int
    let systems = SystemKind.allCases

    func measure() throws -> WorkloadResult {
        var result = WorkloadResult(workload: workload)
        let name = workload.name
        for durable in [false, true] {
            let label = durable ? "durable" : "fast"
            let base = folder.appendingPathComponent(label)
            func place(_ kind: SystemKind) -> URL {
                base.appendingPathComponent(kind.rawValue.filter { $0.isLetter })
            }
            var open = [SystemKind: any CacheSystem]()
            func system(_ kind: SystemKind) -> any CacheSystem { open[kind]! }  // opened by each prepare step

            progress("[\(name)] cold save (\(label)), \(rounds) rounds")
            result.timings[.init(operation: .coldSave, durable: durable)] = try interleaved(
                systems, warmUp: 1, rounds: rounds,
                prepare: { kind, _ in
                    open[kind] = nil
                    try? FileManager.default.removeItem(at: place(kind))
                    open[kind] = try kind.open(in: place(kind), durable: durable)
                }
            ) { kind, _ in try system(kind).saveEverything(workload) }

            progress("[\(name)] re-save unchanged (\(label))")
            result.timings[.init(operation: .resave, durable: durable)] = try interleaved(
                systems, warmUp: 1, rounds: rounds) { kind, _ in try system(kind).saveEverything(workload) }

            if !durable {
                try measureReads(into: &result, system: system, place: place)
            }

            progress("[\(name)] upsert (\(label))")
            var upserts = [ChatMessage]()
            result.timings[.init(operation: .upsert, durable: durable)] = try interleaved(
                systems, warmUp: 1, rounds: rounds,
                prepare: { _, round in upserts = workload.upserts(round: round) }
            ) { kind, _ in try system(kind).upsert(upserts) }

            progress("[\(name)] change log (\(label))")
            var logs = [ChangeLog]()
            result.timings[.init(operation: .changeLog, durable: durable)] = try interleaved(
                systems, warmUp: 1, rounds: rounds,
                prepare: { _, round in logs = workload.changeLogs(round: round) }
            ) { kind, _ in try system(kind).apply(logs) }
        }
        return result
    }

    /// Loads, pages, reopening, the engine alone, the limits and the child measurements (durability off).
    private func measureReads(
        into result: inout WorkloadResult, system: (SystemKind) -> any CacheSystem, place: (SystemKind) -> URL
    ) throws {
        let name = workload.name
        let urls = workload.channelURLs
        progress("[\(name)] load every channel")
        result.timings[.init(operation: .load, durable: false)] = try interleaved(
            systems, warmUp: 1, rounds: rounds
        ) { kind, _ in
            let count = try system(kind).loadEveryChannel(urls)
            guard count == workload.messageCount else {
                throw BenchmarkError("\(kind.rawValue) loaded \(count) messages, expected \(workload.messageCount)")
            }
        }

        progress("[\(name)] pages")
        let queries = workload.pageQueries(count: 1_000)
        var pageCounts = [SystemKind: Int]()
        result.timings[.init(operation: .pages, durable: false)] = try interleaved(
            systems, warmUp: 1, rounds: rounds
        ) { kind, _ in pageCounts[kind] = try system(kind).loadPages(queries) }
        guard Set(pageCounts.values).count == 1 else { throw BenchmarkError("Pages differ: \(pageCounts)") }

        progress("[\(name)] open + channel list")
        result.timings[.init(operation: .openList, durable: false)] = try interleaved(
            systems, warmUp: 1, rounds: rounds
        ) { kind, _ in
            guard try system(kind).openAndLoadChannelList() == workload.channels.count else {
                throw BenchmarkError("\(kind.rawValue) lost channels")
            }
        }

        progress("[\(name)] engine with pre-serialized records, and the limits")
        try measureEngineAndLimits(into: &result)
        result.linesBytes = try Limits.dataFiles(in: place(.flatCache)).reduce(0) { $0 + $1.count }

        progress("[\(name)] peak memory and allocations, in child processes")
        for kind in systems {
            let folder = place(kind)
            var memory = try ProbeRuns.measure(.load, system: kind, folder: folder, workload: name, countAllocations: false)
            let counted = try ProbeRuns.measure(.load, system: kind, folder: folder, workload: name, countAllocations: true)
            (memory.mallocs, memory.mallocBytes) = (counted.mallocs, counted.mallocBytes)
            result.memory[kind] = memory
            result.resaveAllocations[kind] = try ProbeRuns.measure(
                .resave, system: kind, folder: folder, workload: name, countAllocations: true)
        }
    }

    private func measureEngineAndLimits(into result: inout WorkloadResult) throws {
        let rawFolder = folder.appendingPathComponent("raw-engine")
        let engine = try RawEngineSystem(folder: rawFolder, workload: workload)
        try engine.saveEverything()
        let files = try Limits.dataFiles(in: rawFolder)
        let paths = Limits.dataFilePaths(in: rawFolder)
        let records = files.map { file in
            file.split(separator: 0x0A).compactMap { Data(base64Encoded: Data($0)) }
        }
        result.engineBytes = files.reduce(0) { $0 + $1.count }

        let keys = ["engine load", "engine re-save", "sha256", "base64 decode", "base64 encode", "read files"]
        result.engine = try interleaved(keys, warmUp: 1, rounds: rounds) { key, _ in
            switch key {
            case "engine load": _ = try engine.loadEveryChannel()
            case "engine re-save": try engine.saveEverything()
            case "sha256": Limits.sha256(files)
            case "base64 decode": Limits.base64Decode(files)
            case "base64 encode": Limits.base64Encode(records)
            default: Limits.readFiles(paths)
            }
        }
        var replaces = Samples()
        for _ in 0..<20 { replaces.seconds.append(time { Limits.durableReplace(in: rawFolder, size: 100_000) }) }
        result.limits["durable replace"] = replaces
    }
}

struct BenchmarkError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
