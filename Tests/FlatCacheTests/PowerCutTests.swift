@testable import FlatCache
import Foundation
import Testing

/// Simulated power cuts (``PowerCut``, through the file-system seam) while a
/// synchronized cache saves new messages, older ones, change logs and
/// replaces, and flushes: the machine dies at a random file-system call, every
/// write no finished `fsync` covered is dropped, and a new cache opens the
/// folder (replaying the journal). Every channel must then hold what the last
/// `flush()` that returned wrote, or, when the power went during a flush,
/// what that flush was writing; no file may be damaged.
///
/// Without the journal's replay, or with the sidecars written before the
/// journal's `fsync`, flushed messages are lost here.
///
/// `swift test` cuts 60 times; `FLATCACHE_POWER_CUTS=<n>` cuts `n` times.
@Suite(.serialized) struct PowerCutTests {
    typealias Cache = ChatCache<ChatMessage, ChatChannel, ChatUser>
    static var cuts: Int { ProcessInfo.processInfo.environment["FLATCACHE_POWER_CUTS"].flatMap(Int.init) ?? 60 }
    static let channels = (0..<4).map { "power-\($0)" }

    /// What one campaign saw.
    struct Tally: CustomStringConvertible {
        var cuts = 0
        var operations = 0
        var flushesReturned = 0
        var cutsDuringAFlush = 0
        var channelsAsFlushed = 0
        var channelsAsTheFlushCut = 0
        var channelsInNoAllowedState = 0
        var openingsThatReplayed = 0
        var damagedFiles = 0

        var description: String {
            "\(cuts) power cuts after \(operations) operations and \(flushesReturned) flushes (\(cutsDuringAFlush) during a flush); "
                + "channels: \(channelsAsFlushed) as last flushed, \(channelsAsTheFlushCut) as the flush the cut interrupted wrote them, "
                + "\(channelsInNoAllowedState) in no allowed state; \(openingsThatReplayed) openings put back appends from the journal; "
                + "\(damagedFiles) damaged files"
        }
    }

    static func configuration(run: Int, logger: LogRecorder? = nil) -> Configuration {
        var configuration = Configuration(maxMessagesPerChannel: 12, durability: .synchronized, writeDelay: .seconds(3_600))
        // Every other run keeps only summaries in memory: edits go to files it does not hold.
        if run % 2 == 1 { configuration.memoryLimit = 3_000 }
        if let logger { configuration.logger = logger.logger }
        return configuration
    }

    /// A small deterministic generator, so that a failing run can be replayed by its number.
    struct Generator {
        var state: UInt64
        mutating func next(_ bound: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int((state >> 33) % UInt64(bound))
        }
    }

    static func message(_ channel: Int, _ id: Int64, version: Int) -> ChatMessage {
        ChatMessage(messageID: id, channelURL: channels[channel], createdAt: id * 1_000, text: "message \(id) version \(version)")
    }

    /// Each channel as the cache shows it now.
    static func snapshot(_ cache: Cache) async throws -> [[ChatMessage]] {
        var all = [[ChatMessage]]()
        for url in channels { all.append(try await cache.messages.load(in: url)) }
        return all
    }

    @Test(.timeLimit(.minutes(5)))
    func aPowerCutLosesNothingFlushed() async throws {
        var tally = Tally()
        for run in 0..<Self.cuts {
            try await cut(run: run, into: &tally)
        }
        print("power cut test: \(tally)")
        #expect(tally.channelsInNoAllowedState == 0)
        #expect(tally.damagedFiles == 0)
        // The campaign tried what it is about: flushes that returned, cuts inside flushes, replays.
        #expect(tally.flushesReturned > 0 && (tally.cutsDuringAFlush > 0 || Self.cuts < 20))
        #expect(tally.openingsThatReplayed > 0 || Self.cuts < 20)
    }

    func cut(run: Int, into tally: inout Tally) async throws {
        let folder = try TemporaryFolder()
        let root = try FileSystem.canonicalPath(of: folder.url.path)
        var random = Generator(state: UInt64(run + 1) &* 0x9E37_79B9_7F4A_7C15)
        // Given a synchronized cache whose channels are on disk, durably (replaces are synced)
        let cache = try Cache(directory: folder.url, configuration: Self.configuration(run: run))
        var newest = [Int64](repeating: 8, count: Self.channels.count)
        for channel in Self.channels.indices {
            try await cache.messages.replace((1...8).map { Self.message(channel, Int64($0) * 2, version: 0) }, in: Self.channels[channel])
            newest[channel] = 16
        }
        _ = try await cache.flush()
        var flushed = try await Self.snapshot(cache)
        var interrupted: [[ChatMessage]]?

        // When it saves and flushes until the power goes, at a random file-system call
        PowerCut.arm(root: root, dyingAfter: 10 + random.next(900))
        defer { PowerCut.disarm() }
        for version in 1...80 {
            let channel = random.next(Self.channels.count)
            let url = Self.channels[channel]
            do {
                switch random.next(12) {
                case 0..<4:
                    newest[channel] += 2
                    try await cache.messages.save([Self.message(channel, newest[channel], version: version)])
                case 4..<5:  // an older message (odd ids are never new ones)
                    try await cache.messages.save([Self.message(channel, Int64(1 + 2 * random.next(8)), version: version)])
                case 5..<8:
                    let edited = Self.message(channel, newest[channel] - 2 * Int64(random.next(6)), version: version)
                    let deleted = newest[channel] - 2 * Int64(random.next(10))
                    try await cache.messages.applyChangeLog(updated: [edited], deletedMessageIDs: deleted == edited.messageID ? [] : [deleted], in: url)
                case 8:
                    let kept = (0..<6).map { Self.message(channel, newest[channel] - 2 * Int64($0), version: version) }
                    try await cache.messages.replace(kept, in: url)
                default:
                    let writing = try await Self.snapshot(cache)
                    interrupted = writing
                    _ = try await cache.flush()
                    (flushed, interrupted) = (writing, nil)
                    tally.flushesReturned += 1
                }
                tally.operations += 1
            } catch {
                break  // the machine died
            }
            if PowerCut.died { break }
        }
        if interrupted != nil { tally.cutsDuringAFlush += 1 }
        PowerCut.cut()
        tally.cuts += 1

        // Then a new cache (after the journal's replay) shows each channel as flushed, or as the cut flush wrote it
        let recorder = LogRecorder()
        let reopened = try Cache(directory: folder.url, configuration: Self.configuration(run: run, logger: recorder))
        if recorder.entries.contains(where: { $0.message.contains("from its journal") }) { tally.openingsThatReplayed += 1 }
        for (index, url) in Self.channels.enumerated() {
            let shown = try await reopened.messages.load(in: url)
            if shown == flushed[index] {
                tally.channelsAsFlushed += 1
            } else if let interrupted, shown == interrupted[index] {
                tally.channelsAsTheFlushCut += 1
            } else {
                tally.channelsInNoAllowedState += 1
                Issue.record("run \(run): \(url) shows \(shown.map(\.messageID)), flushed \(flushed[index].map(\.messageID))")
            }
        }
        let damaged = try await reopened.verify().filter { !$0.isValid }
        tally.damagedFiles += damaged.count
        for file in damaged { Issue.record("run \(run): \(file.path) is damaged: \(file.problem ?? "")") }
        withExtendedLifetime(cache) {}
    }

    /// A format-1 folder (`GoldenV1/sample-cache`) upgraded by its first write while the power goes at a
    /// random call: the marker is either version, the folder opens, every channel shows what it held or
    /// what the flush wrote, and no file is damaged.
    @Test(.timeLimit(.minutes(3)))
    func anUpgradeCutAnywhereLeavesAFolderThatReads() async throws {
        var (cuts, upgraded, edited) = (0, 0, 0)
        for run in 0..<max(50, Self.cuts / 2) {
            let folder = try TemporaryFolder()
            let copy = folder.appending("cache")
            try FileManager.default.copyItem(at: FormatUpgradeTests.v1("sample-cache"), to: copy)
            var configuration = Configuration(durability: .synchronized, writeDelay: .seconds(3_600))
            configuration.logger = LogRecorder().logger
            let cache = try Cache(directory: copy, configuration: configuration)
            let before = try await cache.messages.loadAll()
            let target = try #require(before.first)
            var changed = target
            changed.text = "edited in run \(run)"
            var generator = Generator(state: UInt64(run + 7) &* 0x9E37_79B9_7F4A_7C15)
            PowerCut.arm(root: try FileSystem.canonicalPath(of: copy.path), dyingAfter: generator.next(40))
            defer { PowerCut.disarm() }
            do {
                try await cache.messages.applyChangeLog(updated: [changed], deletedMessageIDs: [], in: target.channelURL)
                _ = try await cache.flush()
            } catch {
                // the machine died
            }
            PowerCut.cut()
            cuts += 1
            let marker = try String(contentsOf: copy.appendingPathComponent("format"), encoding: .utf8)
            #expect(["flatcache 1\n", "flatcache 2\n"].contains(marker), "run \(run): marker \(marker)")
            if marker == "flatcache 2\n" { upgraded += 1 }
            let reopened = try Cache(directory: copy, configuration: configuration)
            let shown = try await reopened.messages.load(in: target.channelURL)
            let old = before.filter { $0.channelURL == target.channelURL }
            if shown.contains(changed) { edited += 1 } else { #expect(shown == old, "run \(run): \(target.channelURL) is neither") }
            #expect(try await reopened.verify().allSatisfy(\.isValid), "run \(run)")
            withExtendedLifetime(cache) {}
        }
        print("upgrade power cut test: \(cuts) cuts, \(upgraded) folders marked 2 after the cut, \(edited) with the edit")
        #expect(upgraded > 0 && upgraded < cuts)
    }
}
