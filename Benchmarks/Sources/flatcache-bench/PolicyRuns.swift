import BenchmarkKit
import FlatCache
import Foundation

/// FlatCache's policies, which SQLite and the hand-written cache have no
/// counterpart for: a size sweep, and a preloaded bundle with nothing left to
/// seed. Reported, not checked against a target.
struct PolicyResult {
    /// Opening a copy of the saved folder with `sizeLimit` half its bytes,
    /// until `sweep()` returns.
    var sweep = Samples()
    /// The copy's bytes before the sweep: every regular file in it, as FlatCache counts them.
    var bytesBefore = 0
    /// Half of `bytesBefore`: the `sizeLimit` the copy is opened with (`sweepTarget` 1).
    var sizeLimit = 0
    /// Per measured round, the folder's bytes once `sweep()` returned.
    var bytesAfter = [Int]()
    /// Per measured round, the channels evicted since the cache opened (`statistics().evictions`).
    var evicted = [Int]()
    /// Per measured round, what the explicit `sweep()` itself removed (the sweep queued at open runs first).
    var explicitlyEvicted = [Int]()
    /// Opening the seeded folder and loading the channel list without the bundle,
    /// one sample per round, paired by index with `openWithBundle`.
    var openWithoutBundle = Samples()
    /// The same with the bundle seeded before (`preload.upToDate`).
    var openWithBundle = Samples()
    /// What the first, untimed open with the bundle seeded.
    var seeded = PreloadResult()
    /// How many rounds the bundle comparison ran.
    var openRounds = 0
}

/// Measures FlatCache's policies on the folder a workload run saved, each
/// on copies of it, so the run's own folder is only read.
struct PolicyRuns {
    let workload: Workload
    /// FlatCache's folder holding the workload (durability off), quiet while these run.
    let saved: URL
    /// Where the copies go; emptied first.
    let scratch: URL
    let rounds: Int

    /// The bundle comparison takes milliseconds a round and looks for tens of
    /// microseconds: it runs this many times more rounds than the rest.
    static let openRoundsFactor = 50

    /// The configuration the benchmark's FlatCache uses (durability off, no retention cut).
    static let configuration = Configuration(maxMessagesPerChannel: 1_000_000)

    func measure() throws -> PolicyResult {
        try? FileManager.default.removeItem(at: scratch)
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        // A copy nothing writes to: the source of every sweep round, and the
        // bundle, whose identity is its folders' stamps.
        let copy = scratch.appendingPathComponent("saved")
        try Self.copy(saved, to: copy)
        var result = PolicyResult()
        try measureSweep(from: copy, into: &result)
        try measurePreload(bundle: copy, into: &result)
        return result
    }

    /// Each round opens a fresh copy of `source` with `sizeLimit` half its
    /// bytes and `sweepTarget` 1, timed from just before the cache opens until
    /// `sweep()` returns: it queues behind the sweep the open started on the
    /// engine's write queue, so the time covers both.
    private func measureSweep(from source: URL, into result: inout PolicyResult) throws {
        progress("[\(workload.name)] policies: open and sweep to half the folder's size, \(rounds) rounds")
        result.bytesBefore = try Self.bytes(in: source)
        result.sizeLimit = result.bytesBefore / 2
        var configuration = Self.configuration
        configuration.sizeLimit = result.sizeLimit
        configuration.sweepTarget = 1.0
        let folder = scratch.appendingPathComponent("sweep")
        for round in 0..<(1 + rounds) {
            try? FileManager.default.removeItem(at: folder)
            try Self.copy(source, to: folder)
            // The copy's dirty pages go to disk now, not during the timing.
            sync()
            var cache: ChatCache<ChatMessage, ChatChannel, ChatUser>?
            var swept = SweepResult()
            let seconds = try time {
                let opened = try ChatCache(directory: folder, configuration: configuration)
                swept = try waiting { try await opened.sweep() }
                cache = opened
            }
            guard let cache else { throw BenchmarkError("The sweep round opened no cache") }
            let statistics = try waiting { try await cache.statistics() }
            let after = try Self.bytes(in: folder)
            guard after <= result.sizeLimit, statistics.diskBytes <= result.sizeLimit else {
                throw BenchmarkError(
                    "The sweep left \(after) bytes in the folder (statistics: \(statistics.diskBytes)), "
                        + "more than the size limit of \(result.sizeLimit) (half of \(result.bytesBefore)); "
                        + "sweep(): \(swept)")
            }
            guard round >= 1 else { continue }
            result.sweep.seconds.append(seconds)
            result.bytesAfter.append(after)
            result.evicted.append(statistics.evictions)
            result.explicitlyEvicted.append(swept.evictedChannels)
        }
        try? FileManager.default.removeItem(at: folder)
    }

    /// Seeds a folder from `bundle` once, untimed, then times, interleaved,
    /// opening it and loading the channel list without the bundle and with it,
    /// each round's pair in alternating order. The sweep each open queues (the
    /// default size limit) runs off the caller's path; it is waited for after
    /// each timing so that it never lands in the next one.
    private func measurePreload(bundle: URL, into result: inout PolicyResult) throws {
        let openRounds = rounds * Self.openRoundsFactor
        progress("[\(workload.name)] policies: open with a preloaded bundle, \(openRounds) rounds")
        let folder = scratch.appendingPathComponent("seeded")
        var withBundle = Self.configuration
        withBundle.preloadedBundle = bundle
        let channelCount = workload.channels.count

        let first = try ChatCache(directory: folder, configuration: withBundle)
        result.seeded = first.preload ?? PreloadResult()
        guard result.seeded.channelsSeeded == channelCount, result.seeded.seededChannelList,
            result.seeded.damaged.isEmpty
        else { throw BenchmarkError("Seeding from the bundle did \(result.seeded), expected \(channelCount) channels") }
        _ = try waiting { try await first.sweep() }

        // Alternating which goes first (ABBA), so that neither always follows the other.
        for round in 0..<(1 + openRounds) {
            for useBundle in round.isMultiple(of: 2) ? [false, true] : [true, false] {
                let configuration = useBundle ? withBundle : Self.configuration
                var cache: ChatCache<ChatMessage, ChatChannel, ChatUser>?
                let seconds = try time {
                    cache = try waiting {
                        let cache = try ChatCache(directory: folder, configuration: configuration)
                        guard try await cache.channels.load().count == channelCount else {
                            throw BenchmarkError("The seeded folder lost channels")
                        }
                        return cache
                    }
                }
                guard let cache else { throw BenchmarkError("The bundle round opened no cache") }
                if useBundle, cache.preload?.upToDate != true {
                    throw BenchmarkError(
                        "Opening with the bundle seeded before did \(String(describing: cache.preload)), expected upToDate")
                }
                // The sweep the open queued ends here, untimed, not in the next timing.
                _ = try waiting { try await cache.sweep() }
                guard round >= 1 else { continue }
                if useBundle {
                    result.openWithBundle.seconds.append(seconds)
                } else {
                    result.openWithoutBundle.seconds.append(seconds)
                }
            }
        }
        result.openRounds = openRounds
    }

    /// Copies `source` to `target` as `cp -a` does, keeping times and modes.
    static func copy(_ source: URL, to target: URL) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/cp")
        process.arguments = ["-a", source.path, target.path]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchmarkError("cp -a \(source.path) \(target.path) failed with status \(process.terminationStatus)")
        }
    }

    /// Every byte of every regular file at or under `folder`, as the size limit counts them.
    static func bytes(in folder: URL) throws -> Int {
        let keys: [URLResourceKey] = [.isRegularFileKey, .fileSizeKey]
        let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: keys)
        var total = 0
        while let url = walker?.nextObject() as? URL {
            let values = try url.resourceValues(forKeys: Set(keys))
            if values.isRegularFile == true { total += values.fileSize ?? 0 }
        }
        return total
    }
}
