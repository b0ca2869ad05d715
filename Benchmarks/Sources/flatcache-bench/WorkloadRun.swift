import BenchmarkKit
import FlatCache
import Foundation

/// What a chat screen does, timed for every system on one workload.
/// FlatCache's writes are timed until `flush()` returns.
enum Operation: String, CaseIterable, Sendable {
    case coldSave = "cold save of everything"
    case resave = "re-save unchanged"
    case load = "load every channel, cold, every core"
    case loadAgain = "open again: load 10 channels loaded before, x100"
    case upsert = "upsert 1 new message into each channel"
    case upsertAtLimit = "upsert 1 new message into each channel at its limit"
    case burst = "burst: 1,000 messages one at a time into 10 channels"
    case changeLog = "change log per channel (5 updated, 2 deleted)"
    case pages = "page of 30 before a timestamp, x1,000"
    case pagesWarm = "page of 30, x1,000 in 10 channels loaded before"
    case pagesCold = "page of 30, first touch of each channel (cold)"
    case openList = "open + load the channel list"
    case verify = "verify every file (every record decoded)"

    /// Operations that write, timed with durability off and on.
    var writes: Bool { [.coldSave, .resave, .upsert, .upsertAtLimit, .burst, .changeLog].contains(self) }

    /// The systems that run it: the new rows leave out the hand-written cache,
    /// which would take minutes for them (it rewrites a file per message).
    var systems: [SystemKind] {
        [.loadAgain, .upsertAtLimit, .burst, .pagesWarm, .pagesCold, .verify].contains(self)
            ? [.flatCache, .sqlite] : SystemKind.allCases
    }

    /// The operations that only read, timed with durability off.
    static let reads: Set<Operation> = [.load, .loadAgain, .pages, .pagesWarm, .pagesCold, .openList]

    /// The row's name in the guard's baseline: the operation, and the durability of a write.
    func rowName(durable: Bool) -> String {
        writes ? "\(rawValue), durability \(durable ? "on" : "off")" : rawValue
    }
}

/// What one run of a workload measures: the full report, the guard's rows, or XL's.
struct RunSelection {
    /// The systems timed (each operation keeps to those of ``Operation/systems`` among them).
    var systems: [SystemKind]
    var operations: Set<Operation>
    /// Durability off, then on for the writes when `true` is here.
    var durabilities: [Bool]
    /// The sections the full report has beyond the main table: policies, collections,
    /// encryption, the engine and its limits, memory and allocations.
    var extras: Bool
    /// FlatCache without its default size limit (256 MiB), which would sweep XL's folder during its cold save.
    var unlimitedSize = false

    /// Everything: the report `Benchmarks/run` prints and `--check-targets` checks.
    static let full = RunSelection(
        systems: SystemKind.allCases, operations: Set(Operation.allCases).subtracting([.verify]),
        durabilities: [false, true], extras: true)

    /// The regression guard's rows: FlatCache against SQLite, both durabilities, nothing else.
    static let guardRows = RunSelection(
        systems: [.flatCache, .sqlite], operations: Set(Operation.allCases).subtracting([.verify]),
        durabilities: [false, true], extras: false)

    /// Workload XL: how cost grows, FlatCache against SQLite, durability off.
    static let extraLarge = RunSelection(
        systems: [.flatCache, .sqlite],
        operations: [.coldSave, .load, .upsert, .changeLog, .pagesWarm, .pagesCold, .loadAgain, .openList, .verify],
        durabilities: [false], extras: false, unlimitedSize: true)
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
    /// The data file size of the "replace pair" limit.
    var pairBytes = 0
    var engine = [String: Samples]()
    var memory = [SystemKind: ProbeRuns.Result]()
    var resaveAllocations = [SystemKind: ProbeRuns.Result]()
    /// FlatCache's sweep and preloaded bundle, which the other systems lack.
    var policies: PolicyResult?
    /// A `MessageCollection`'s first cached page, against `loadLatest` and SQLite.
    var collections: CollectionResult?
    /// FlatCache with encryption at rest against FlatCache without.
    var encryption: EncryptionResult?
}

extension Workload {
    /// One page of 30 per channel, before the middle message's time: the
    /// "first touch" queries, each channel read once after a fresh open.
    var firstTouchPageQueries: [PageQuery] {
        channels.indices.map { index in
            PageQuery(channelURL: channels[index].channelURL, before: messages[index][messages[index].count / 2].createdAt)
        }
    }
}

struct WorkloadRun {
    let workload: Workload
    let folder: URL
    let rounds: Int
    var selection = RunSelection.full

    /// The systems that run `operation` in this run; none when the operation is not selected.
    private func systems(_ operation: Operation) -> [SystemKind] {
        guard selection.operations.contains(operation) else { return [] }
        return operation.systems.filter(selection.systems.contains)
    }

    func measure() throws -> WorkloadResult {
        var result = WorkloadResult(workload: workload)
        let name = workload.name
        for durable in selection.durabilities {
            let label = durable ? "durable" : "fast"
            let base = folder.appendingPathComponent(label)
            func place(_ kind: SystemKind) -> URL {
                base.appendingPathComponent(kind.rawValue.filter { $0.isLetter })
            }
            var open = [SystemKind: any CacheSystem]()
            func system(_ kind: SystemKind) -> any CacheSystem { open[kind]! }  // opened by each prepare step

            // The cold save always runs: it makes the stores the other rows use. Unselected, once, and not kept.
            let saveRounds = selection.operations.contains(.coldSave) ? rounds : 1
            progress("[\(name)] cold save (\(label)), \(saveRounds) rounds")
            // Each round saves into an empty folder, as an app's first save does. The round before is
            // moved aside, not deleted, until the row ends: on ext4, creating a file within 30 s of
            // deleting many in its block group scans past each of them (`recently_deleted`), which
            // made one round's file creation pay for the last round's deletion (docs/performance.md).
            let setAside = base.appendingPathComponent("set-aside")
            // What a run stopped by an error left there (a rename onto it would fail).
            try? FileManager.default.removeItem(at: setAside)
            if let deleted = Self.lastMassDeletion {
                let wait = Self.deletionWindow - (ContinuousClock.now - deleted)
                if wait > .zero {
                    progress("[\(name)] waiting \(wait.components.seconds + 1) s for the files the last cold save deleted to age past ext4's 30 s window")
                    Thread.sleep(forTimeInterval: Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18)
                }
            }
            let saves = try interleaved(
                selection.systems, warmUp: 1, rounds: saveRounds,
                prepare: { kind, round in
                    open[kind] = nil
                    try Self.moveAside(place(kind), into: setAside, as: "\(kind.rawValue.filter { $0.isLetter })-\(round)")
                    open[kind] = try kind.open(in: place(kind), durable: durable, unlimitedSize: selection.unlimitedSize)
                }
            ) { kind, _ in try system(kind).saveEverything(workload) }
            try? FileManager.default.removeItem(at: setAside)
            Self.lastMassDeletion = .now
            if !systems(.coldSave).isEmpty { result.timings[.init(operation: .coldSave, durable: durable)] = saves }

            if !systems(.resave).isEmpty {
                progress("[\(name)] re-save unchanged (\(label))")
                result.timings[.init(operation: .resave, durable: durable)] = try interleaved(
                    systems(.resave), warmUp: 1, rounds: rounds) { kind, _ in try system(kind).saveEverything(workload) }
            }

            if !durable, !selection.operations.isDisjoint(with: Operation.reads) {
                try measureReads(into: &result, system: system, place: place)
            }

            if !systems(.upsert).isEmpty {
                progress("[\(name)] upsert (\(label))")
                var upserts = [ChatMessage]()
                result.timings[.init(operation: .upsert, durable: durable)] = try interleaved(
                    systems(.upsert), warmUp: 1, rounds: rounds,
                    prepare: { _, round in upserts = workload.upserts(round: round) }
                ) { kind, _ in try system(kind).upsert(upserts) }
            }

            if !systems(.burst).isEmpty {
                progress("[\(name)] burst (\(label))")
                var burst = [ChatMessage]()
                result.timings[.init(operation: .burst, durable: durable)] = try interleaved(
                    systems(.burst), warmUp: 1, rounds: rounds,
                    prepare: { _, round in burst = workload.burst(round: round) }
                ) { kind, _ in try system(kind).upsert(burst) }
            }

            if !systems(.upsertAtLimit).isEmpty {
                progress("[\(name)] upsert at the retention limit (\(label))")
                result.timings[.init(operation: .upsertAtLimit, durable: durable)] = try measureUpsertAtLimit(durable: durable, base: base)
            }

            if !systems(.changeLog).isEmpty {
                progress("[\(name)] change log (\(label))")
                var logs = [ChangeLog]()
                result.timings[.init(operation: .changeLog, durable: durable)] = try interleaved(
                    systems(.changeLog), warmUp: 1, rounds: rounds,
                    prepare: { _, round in logs = workload.changeLogs(round: round) }
                ) { kind, _ in try system(kind).apply(logs) }
            }

            if !durable, !systems(.verify).isEmpty {
                progress("[\(name)] verify")
                var verified = [SystemKind: Int]()
                result.timings[.init(operation: .verify, durable: false)] = try interleaved(
                    systems(.verify), warmUp: 1, rounds: rounds
                ) { kind, _ in verified[kind] = try system(kind).verifyEverything() }
                guard Set(verified.values).count == 1 else { throw BenchmarkError("Verified messages differ: \(verified)") }
            }
        }
        if selection.extras {
            result.encryption = try EncryptionRuns(
                workload: workload, scratch: folder.appendingPathComponent("encryption"), rounds: rounds
            ).measure()
        }
        return result
    }

    /// How long after deleting many files the benchmark waits before a row
    /// that creates many: ext4 skips inodes freed in the last 30 s (35 s while
    /// their inode table block is dirty) when it allocates one.
    private static let deletionWindow = Duration.seconds(36)

    /// When a cold save row last deleted the folders its rounds set aside,
    /// in any workload or pass of this process (the guard runs S and L, and
    /// passes, one after another). Only the benchmark's one thread reads
    /// and writes it.
    nonisolated(unsafe) private static var lastMassDeletion: ContinuousClock.Instant?

    /// Seconds since ``lastMassDeletion``: the guard hands it to a re-measure in a child
    /// process and takes it back, so that the wait spans processes.
    static var secondsSinceMassDeletion: Double? {
        get {
            lastMassDeletion.map { deleted in
                let elapsed = ContinuousClock.now - deleted
                return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            }
        }
        set { lastMassDeletion = newValue.map { ContinuousClock.now - .seconds($0) } }
    }

    /// Moves `folder`, if it exists, into `setAside` under `name` (a rename: no file is deleted).
    private static func moveAside(_ folder: URL, into setAside: URL, as name: String) throws {
        guard FileManager.default.fileExists(atPath: folder.path) else { return }
        try FileManager.default.createDirectory(at: setAside, withIntermediateDirectories: true)
        try FileManager.default.moveItem(at: folder, to: setAside.appendingPathComponent(name))
    }

    /// The upserts on stores whose every channel has reached its retention limit.
    private func measureUpsertAtLimit(durable: Bool, base: URL) throws -> [SystemKind: Samples] {
        var limited = [SystemKind: any CacheSystem]()
        var upserts = [ChatMessage]()
        for kind in systems(.upsertAtLimit) {
            let place = base.appendingPathComponent("limited-" + kind.rawValue.filter { $0.isLetter })
            try? FileManager.default.removeItem(at: place)
            let limit = workload.messages.map(\.count).max() ?? 1
            limited[kind] = try kind.open(
                in: place, durable: durable, messageLimit: limit, unlimitedSize: selection.unlimitedSize)
            try limited[kind]!.saveEverything(workload)
        }
        return try interleaved(
            systems(.upsertAtLimit), warmUp: 1, rounds: rounds,
            prepare: { _, round in upserts = workload.upserts(round: round) }
        ) { kind, _ in try limited[kind]!.upsert(upserts) }
    }

    /// Loads, pages, reopening, and with the extras the engine alone, the limits and
    /// the child measurements (durability off).
    private func measureReads(
        into result: inout WorkloadResult, system: (SystemKind) -> any CacheSystem, place: (SystemKind) -> URL
    ) throws {
        let name = workload.name
        let urls = workload.channelURLs
        progress("[\(name)] load every channel, cold")
        result.timings[.init(operation: .load, durable: false)] = try interleaved(
            systems(.load), warmUp: 1, rounds: rounds, prepare: { kind, _ in try system(kind).reopen() }
        ) { kind, _ in
            let count = try system(kind).loadEveryChannel(urls)
            guard count == workload.messageCount else {
                throw BenchmarkError("\(kind.rawValue) loaded \(count) messages, expected \(workload.messageCount)")
            }
        }

        if !systems(.pages).isEmpty {
            progress("[\(name)] pages")
            let queries = workload.pageQueries(count: 1_000)
            var pageCounts = [SystemKind: Int]()
            result.timings[.init(operation: .pages, durable: false)] = try interleaved(
                systems(.pages), warmUp: 1, rounds: rounds
            ) { kind, _ in pageCounts[kind] = try system(kind).loadPages(queries) }
            guard Set(pageCounts.values).count == 1 else { throw BenchmarkError("Pages differ: \(pageCounts)") }
        }

        // Ten channels an app has open: loaded once, then read again and paged.
        let recent = Array(urls.prefix(10))
        for kind in systems(.loadAgain) { _ = try system(kind).loadAgain(recent, times: 1) }
        progress("[\(name)] open again")
        let expected = workload.messages.prefix(10).reduce(0) { $0 + $1.count } * 100
        result.timings[.init(operation: .loadAgain, durable: false)] = try interleaved(
            systems(.loadAgain), warmUp: 1, rounds: rounds
        ) { kind, _ in
            let count = try system(kind).loadAgain(recent, times: 100)
            guard count == expected else { throw BenchmarkError("\(kind.rawValue) loaded \(count), expected \(expected)") }
        }

        progress("[\(name)] pages, warm and cold")
        let warmQueries = workload.pageQueries(count: 1_000, channelCount: 10)
        var warmCounts = [SystemKind: Int]()
        result.timings[.init(operation: .pagesWarm, durable: false)] = try interleaved(
            systems(.pagesWarm), warmUp: 1, rounds: rounds
        ) { kind, _ in warmCounts[kind] = try system(kind).loadPages(warmQueries) }
        let coldQueries = workload.firstTouchPageQueries
        var coldCounts = [SystemKind: Int]()
        result.timings[.init(operation: .pagesCold, durable: false)] = try interleaved(
            systems(.pagesCold), warmUp: 1, rounds: rounds, prepare: { kind, _ in try system(kind).reopen() }
        ) { kind, _ in coldCounts[kind] = try system(kind).loadPages(coldQueries) }
        guard Set(warmCounts.values).count <= 1, Set(coldCounts.values).count <= 1 else {
            throw BenchmarkError("Pages differ: \(warmCounts), \(coldCounts)")
        }

        progress("[\(name)] open + channel list")
        // Each round's store is closed before the next round (untimed): FlatCache's sweep at
        // open ends first, so that no round runs beside the sweeps of the rounds before it.
        result.timings[.init(operation: .openList, durable: false)] = try interleaved(
            systems(.openList), warmUp: 1, rounds: rounds, prepare: { kind, _ in try system(kind).closeOpened() }
        ) { kind, _ in
            guard try system(kind).openAndLoadChannelList() == workload.channels.count else {
                throw BenchmarkError("\(kind.rawValue) lost channels")
            }
        }
        for kind in systems(.openList) { try system(kind).closeOpened() }
        result.linesBytes = try Limits.dataFiles(in: place(.flatCache)).reduce(0) { $0 + $1.count }
        guard selection.extras else { return }

        result.policies = try PolicyRuns(
            workload: workload, saved: place(.flatCache), scratch: folder.appendingPathComponent("policies"),
            rounds: rounds
        ).measure()
        result.collections = try CollectionRuns(
            workload: workload, scratch: folder.appendingPathComponent("collections"), rounds: rounds
        ).measure()

        progress("[\(name)] engine with pre-serialized records, and the limits")
        try measureEngineAndLimits(into: &result)

        progress("[\(name)] peak memory and allocations, in child processes")
        for kind in selection.systems {
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
        // The size of an average message file of this workload.
        let fileSize = result.engineBytes / max(1, files.count)
        var pairs = Samples()
        for _ in 0..<5 {
            pairs.seconds.append(time { for _ in 0..<100 { Limits.replacePair(in: rawFolder, size: fileSize) } } / 100)
        }
        result.limits["replace pair"] = pairs
        result.pairBytes = fileSize
    }
}
