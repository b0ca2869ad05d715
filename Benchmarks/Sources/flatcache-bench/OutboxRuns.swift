import ArgumentParser
import BenchmarkKit
import FlatCache
import Foundation

/// Issue 23's row: 1,000 messages typed into 10 channels and queued in an
/// outbox one at a time, each `send` returning only once its entry is on
/// disk. FlatCache's `cache.outbox.send(_:requestID:)`, awaited one after
/// another, against `SQLiteOutbox` (one transaction per message,
/// `synchronous = FULL`, a `DatabaseQueue`'s default journal mode).
struct OutboxResult {
    /// Seconds for the 1,000 sends, per system.
    var samples = [SystemKind: Samples]()
    /// SQLite's journal mode, as it reported it.
    var journalMode = ""
    var rounds = 0

    /// FlatCache's median over SQLite's.
    var ratio: Double? {
        guard let mine = samples[.flatCache]?.median, let theirs = samples[.sqlite]?.median else { return nil }
        return mine / theirs
    }

    /// The row's section of the report.
    var markdown: [String] {
        guard let ratio else { return [] }
        var out = ["## Outbox: enqueue \(OutboxRuns.count.formatted()) messages into \(OutboxRuns.channelCount) channels durably\n"]
        out.append("| operation | FlatCache | SQLite (GRDB) | FlatCache / SQLite |")
        out.append("|---|---|---|---|")
        out.append("| \(OutboxRuns.count.formatted()) sends, one at a time, each on disk before it returns | "
            + "\(samples[.flatCache]?.summary ?? "–") | \(samples[.sqlite]?.summary ?? "–") | \(String(format: "%.2fx", ratio)) |")
        out.append("")
        out.append("FlatCache: `cache.outbox.send(_:requestID:)` awaited one after another in one task (every write "
            + "fsynced before it returns). SQLite: a `DatabaseQueue` (journal mode `\(journalMode)`), `PRAGMA synchronous = FULL`, "
            + "one `INSERT` transaction per message into a table of the outbox line's fields. Each round a fresh folder "
            + "for each, opened untimed; the same messages (`ChatMessage`, 20–400 characters of text) and request ids "
            + "(UUIDs made before the timing); afterwards each checked to hold \(OutboxRuns.count / OutboxRuns.channelCount) "
            + "entries in each channel. Medians of \(rounds) rounds after 1 warm-up, systems interleaved round by round.")
        if let mine = samples[.flatCache]?.seconds, let theirs = samples[.sqlite]?.seconds {
            let ratios = zip(mine, theirs).map { String(format: "%.2f", $0 / $1) }
            out.append("")
            out.append("Round by round, FlatCache / SQLite: \(ratios.joined(separator: ", ")).")
        }
        out.append("")
        return out
    }

    /// The target: FlatCache no slower than SQLite.
    var target: Report.Target? {
        ratio.map { ratio in
            Report.Target(
                text: "outbox: enqueue \(OutboxRuns.count.formatted()) messages into \(OutboxRuns.channelCount) channels durably, "
                    + "FlatCache / SQLite (GRDB) <= 1.0",
                measured: ratio, limit: 1.0, atLeast: false)
        }
    }
}

/// Times the outbox row in `scratch`, emptied first and removed after.
struct OutboxRuns {
    typealias Cache = ChatCache<ChatMessage, ChatChannel, ChatUser>

    static let count = 1_000
    static let channelCount = 10

    let workload: Workload
    let scratch: URL
    let rounds: Int

    func measure() throws -> OutboxResult {
        try? FileManager.default.removeItem(at: scratch)
        defer { try? FileManager.default.removeItem(at: scratch) }
        progress("outbox: \(Self.count) durable sends into \(Self.channelCount) channels, \(rounds) rounds")
        var result = OutboxResult(rounds: rounds)
        var typed = [(requestID: String, message: ChatMessage)]()
        var cache: Cache?
        var sqlite: SQLiteOutbox?
        result.samples = try interleaved([SystemKind.flatCache, .sqlite], warmUp: 1, rounds: rounds,
            prepare: { kind, round in
                typed = workload.typed(round: round, count: Self.count, channelCount: Self.channelCount)
                let folder = scratch.appendingPathComponent("round-\(round)-\(kind.rawValue.filter(\.isLetter))")
                switch kind {
                case .flatCache:
                    if let open = cache { try waiting { try await open.close() } }
                    cache = try Cache(directory: folder)
                default: sqlite = try SQLiteOutbox(folder: folder)
                }
            }
        ) { kind, _ in
            switch kind {
            case .flatCache:
                try waiting { [cache, typed] in
                    for entry in typed { _ = try await cache!.outbox.send(entry.message, requestID: entry.requestID) }
                }
            default:
                for entry in typed { try sqlite!.send(entry.message, requestID: entry.requestID) }
            }
        }
        // The last round's stores, checked untimed: every entry there, in every channel.
        let expected = Self.count / Self.channelCount
        let flatCounts = try waiting { [cache] in
            let entries = try await cache!.outbox.entries()
            try await cache!.close()
            return Dictionary(grouping: entries, by: \.channelURL).mapValues(\.count)
        }
        let sqliteCounts = try sqlite!.countsByChannel()
        for (name, counts) in [("FlatCache", flatCounts), ("SQLite", sqliteCounts)] {
            guard counts.count == Self.channelCount, counts.values.allSatisfy({ $0 == expected }) else {
                throw BenchmarkError("\(name)'s outbox holds \(counts), not \(expected) entries in each of \(Self.channelCount) channels")
            }
        }
        result.journalMode = try sqlite!.journalMode()
        return result
    }
}

extension Workload {
    /// `count` messages typed into the first `channelCount` channels in turn,
    /// not sent yet (id 0), each with a new request id.
    func typed(round: Int, count: Int, channelCount: Int) -> [(requestID: String, message: ChatMessage)] {
        (0..<count).map { index in
            let channel = index % channelCount
            var message = messages[channel][index % messages[channel].count]
            message.messageID = 0
            message.createdAt = (messages[channel].last?.createdAt ?? 0) + Int64(round * count + index + 1) * 1_000
            message.updatedAt = 0
            return (UUID().uuidString, message)
        }
    }
}

/// `flatcache-bench outbox`: the outbox row alone, with its target.
struct OutboxRun: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "outbox",
        abstract: "Time 1,000 durable outbox sends into 10 channels: FlatCache against SQLite (GRDB).")

    @Option(help: "Measured rounds, after one warm-up round.")
    var rounds = 5

    @Flag(help: "Exit with status 1 when the target is missed.")
    var checkTargets = false

    func validate() throws {
        if rounds < 1 { throw ValidationError("Please give --rounds a number of at least 1.") }
    }

    func run() throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("flatcache-bench-outbox-\(getpid())")
        let result = try OutboxRuns(workload: .small(), scratch: scratch, rounds: rounds).measure()
        print(Report.machine(rounds: rounds))
        print(result.markdown.joined(separator: "\n"))
        print("## Targets\n")
        guard let target = result.target else { throw ExitCode(1) }
        print("- \(target.met ? "met" : "MISSED"): \(target.text): \(String(format: "%.2f", target.measured))")
        if checkTargets && !target.met { throw ExitCode(1) }
    }
}
