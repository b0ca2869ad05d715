import FlatCache
import Foundation

/// The `liveness` command: a campaign that cancels listeners and calls at
/// random moments while saves, outbox sends and live events flow, and checks
/// that every cancelled call ends, and every call after the storm answers,
/// within a bound (see ``LivenessStopwatch``).
///
/// `flatcache-test-helper liveness <folder> <family> <seed> <rounds> [<bound ms>]`
///
/// - `family`: `collections`, `outbox`, `users`, `observation` or `models`
///   (one file each, `Liveness+<Family>.swift`).
/// - `rounds`: a number of rounds, or `<n>s` for as many rounds as fit in `n` seconds.
/// - `bound ms`: how long a cancelled call may take to end, and a call after
///   the storm to answer; 10,000 by default.
///
/// Standard output, one line per event, each in one write:
/// `round <n> cancels <c> max-end-ms <ms>` after each round (the heartbeat),
/// `done family <f> rounds <n> cancels <c> running-at-cancel <r> max-end-ms <ms> slowest <call>
/// answers <a> max-answer-ms <ms> slowest-answer <call>` at the end (exit 0);
/// `stuck <call> ...` when a call passed its bound (exit 1 after 30 s, time
/// for a debugger); `violation <what>` when a check failed (exit 1 at once).
enum Liveness {
    static func start(_ arguments: [String]) -> Never {
        guard arguments.count == 6 || arguments.count == 7, let seed = UInt64(arguments[4]) else {
            fail("usage: flatcache-test-helper liveness <folder> <family> <seed> <rounds|<n>s> [<bound ms>]", status: 2)
        }
        let folder = URL(fileURLWithPath: arguments[2])
        let family = arguments[3]
        let limit = arguments[5]
        let rounds = limit.hasSuffix("s") ? nil : Int(limit)
        let seconds = limit.hasSuffix("s") ? Double(limit.dropLast()) : nil
        let boundMilliseconds = arguments.count == 7 ? Int(arguments[6]) : 10_000
        guard rounds != nil || seconds != nil, let boundMilliseconds, boundMilliseconds > 0 else {
            fail("bad rounds or bound", status: 2)
        }
        let stopwatch = LivenessStopwatch(bound: .milliseconds(boundMilliseconds))
        stopwatch.startWatching()
        Task.detached {
            do {
                let campaign = try await makeFamily(family, folder: folder, seed: seed, stopwatch: stopwatch)
                let clock = ContinuousClock()
                let started = clock.now
                var round = 0
                while rounds.map({ round < $0 }) ?? (clock.now - started < .seconds(seconds ?? 0)) {
                    var random = XorShift(seed: seed &* 1_000_003 &+ UInt64(round))
                    try await campaign.round(round, random: &random)
                    round += 1
                    let totals = stopwatch.snapshot
                    say("round \(round) cancels \(totals.cancels) max-end-ms \(LivenessStopwatch.Totals.milliseconds(totals.slowestEnd))")
                }
                try await campaign.finish()
                let totals = stopwatch.snapshot
                typealias T = LivenessStopwatch.Totals
                say(
                    "done family \(family) rounds \(round) cancels \(totals.cancels) running-at-cancel \(totals.runningAtCancel)"
                        + " max-end-ms \(T.milliseconds(totals.slowestEnd)) slowest \(totals.slowestEndName)"
                        + " answers \(totals.answers) max-answer-ms \(T.milliseconds(totals.slowestAnswer))"
                        + " slowest-answer \(totals.slowestAnswerName)")
                exit(0)
            } catch {
                fail("liveness \(family): \(error)", status: 1)
            }
        }
        dispatchMain()
    }

    static func makeFamily(
        _ name: String, folder: URL, seed: UInt64, stopwatch: LivenessStopwatch
    ) async throws -> any LivenessFamily {
        switch name {
        case "collections": try await LivenessCollections(folder: folder, seed: seed, stopwatch: stopwatch)
        case "outbox": try await LivenessOutbox(folder: folder, seed: seed, stopwatch: stopwatch)
        case "users": try await LivenessUsers(folder: folder, seed: seed, stopwatch: stopwatch)
        case "observation": try await LivenessObservation(folder: folder, seed: seed, stopwatch: stopwatch)
        case "search": try await LivenessSearch(folder: folder, seed: seed, stopwatch: stopwatch)
        case "models":
            if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) {
                try await LivenessModels(folder: folder, seed: seed, stopwatch: stopwatch)
            } else {
                fail("the models need macOS 14", status: 2)
            }
        default: fail("unknown liveness family \(name)", status: 2)
        }
    }

    /// Whether the environment variable `FLATCACHE_LIVENESS_SKIP` (names
    /// separated by commas) skips the check `name` (`waitUntilSent`,
    /// `retry`, `line`): to see what else a campaign finds while a known bug stands.
    static func skips(_ name: String) -> Bool {
        (ProcessInfo.processInfo.environment["FLATCACHE_LIVENESS_SKIP"] ?? "").split(separator: ",").contains { $0 == name }
    }

    /// One line on standard output, in one unbuffered write.
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    /// A check failed: says what, and exits 1.
    static func violation(_ what: String) -> Never {
        say("violation \(what)")
        fail("liveness: \(what)", status: 1)
    }

    /// A moment to cancel at: at once (after a yield), within half a
    /// millisecond, within 3 ms, or within 15 ms, a quarter of the time each.
    static func moment(_ random: inout XorShift) -> Duration {
        switch random.next(4) {
        case 0: .zero
        case 1: .microseconds(random.next(500))
        case 2: .microseconds(500 + random.next(2_500))
        default: .microseconds(3_000 + random.next(12_000))
        }
    }
}

/// One scenario family of the `liveness` command.
protocol LivenessFamily: Sendable {
    /// One round: listeners and calls started and cancelled at random
    /// moments, then calls that must still answer.
    func round(_ number: Int, random: inout XorShift) async throws
    /// Stops everything (every stop and dispose must answer).
    func finish() async throws
}
