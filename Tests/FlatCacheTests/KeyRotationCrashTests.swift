@testable import FlatCache
import Foundation
import Testing

/// kill -9 of a process in the middle of a key change (issue 25): after the
/// kill every data file opens under the old key or the new one, and the next
/// open, with either key, finishes the change with every record as written.
///
/// Each run copies a filled folder, lets `flatcache-test-helper rekey` open it
/// and change its key (A to B, plain to B, or A to plain), and kills it a
/// random time after it says it is starting, up to what a whole change
/// takes on this machine now: timed by an unkilled run first, then by every
/// run that finished before its kill (the machine's load changes as other
/// suites run beside this one).
///
/// `swift test` kills 60 times; `FLATCACHE_REKEY_KILLS=500 swift test --filter KeyRotationCrashTests` runs more.
@Suite(.serialized, .timeLimit(.minutes(5))) struct KeyRotationCrashTests {
    static var kills: Int { ProcessInfo.processInfo.environment["FLATCACHE_REKEY_KILLS"].flatMap(Int.init) ?? 60 }
    static let channelCount = 30
    static let perChannel = 30

    /// A change the helper makes: from one key (or plain) to another.
    enum Change: String, CaseIterable {
        case rotate = "A→B", encrypt = "plain→B", decrypt = "A→plain"

        var old: Data? { self == .encrypt ? nil : RotationFolder.keyA }
        var new: Data? { self == .decrypt ? nil : RotationFolder.keyB }
    }

    /// How one helper run ended.
    struct Outcome {
        var lines: [String]
        var killed: Bool
        var status: Int32
    }

    @Test func killedAtRandomPointsEveryFileOpensUnderOneKeyAndTheNextOpenFinishesTheChange() async throws {
        let encrypted = try TemporaryFolder()
        let plain = try TemporaryFolder()
        try await RotationFolder.fill(encrypted.url, encryption: .aes256gcm(key: RotationFolder.keyA), channelCount: Self.channelCount, perChannel: Self.perChannel)
        try await RotationFolder.fill(plain.url, encryption: nil, channelCount: Self.channelCount, perChannel: Self.perChannel)
        let urls = RotationFolder.channelURLs(Self.channelCount)
        let expected = try await RotationFolder.contents(
            of: RotationFolder.Cache(directory: encrypted.url, configuration: RotationFolder.configuration(.aes256gcm(key: RotationFolder.keyA))),
            channels: urls)
        #expect(expected.messages.values.map(\.count).reduce(0, +) == Self.channelCount * Self.perChannel)
        #expect(expected.messages[RotationFolder.quietChannel] == [])
        #expect(expected.channels.count == urls.count && expected.outbox.count == 3 && expected.continuity.changeLogToken != nil)
        let master = { (change: Change) in change.old == nil ? plain : encrypted }

        // One whole change of each kind, not killed: it works, and says how long it takes.
        var duration = [Change: UInt32]()
        for change in Change.allCases {
            let work = try TemporaryFolder()
            let folder = work.appending("cache")
            try FileManager.default.copyItem(at: master(change).url, to: folder)
            let outcome = try await runHelper(folder.path, change, killAfter: nil)
            let changed = outcome.lines.last { $0.hasPrefix("changed ") }.flatMap { UInt32($0.dropFirst(8)) }
            #expect(outcome.status == 0 && changed != nil, "\(change.rawValue) did not finish: \(outcome)")
            duration[change] = changed ?? 100_000
            #expect(try await Self.checkFinished(folder, with: change.new, other: change.old, expected: expected) == [])
        }

        var killedMidChange = 0, wentBack = 0, beforeStart = 0, afterEnd = 0
        var runs = [Change: Int]()
        for run in 0..<Self.kills {
            let change = [Change.rotate, .rotate, .encrypt, .decrypt][run % 4]
            runs[change, default: 0] += 1
            let work = try TemporaryFolder()
            let folder = work.appending("cache")
            try FileManager.default.copyItem(at: master(change).url, to: folder)
            let delay = UInt32.random(in: 0...(duration[change] ?? 100_000))
            let outcome = try await runHelper(folder.path, change, killAfter: delay)
            if let changed = outcome.lines.last(where: { $0.hasPrefix("changed ") }).flatMap({ UInt32($0.dropFirst(8)) }) {
                duration[change] = changed  // the kill came too late: aim by what a change takes now
            }
            #expect(outcome.killed || (outcome.status == 0 && outcome.lines.contains { $0.hasPrefix("changed ") }),
                "run \(run) ended on its own without finishing: \(outcome)")

            // Every data file opens under one of the two keys, as the kill left it.
            let (old, new) = (try change.old.map { try Sealer(.aes256gcm(key: $0)) }, try change.new.map { try Sealer(.aes256gcm(key: $0)) })
            let unreadable = try Self.filesOpeningUnderNeither(folder.path, old, new)
            #expect(unreadable == [], "run \(run) (\(change.rawValue), killed \(delay) µs in): \(unreadable)")

            // The next open finishes the change toward the key it is given: a change under way
            // either way (toward plain only back: the files under A need A), else where it stands.
            let underWay = FileManager.default.fileExists(atPath: folder.appendingPathComponent("rekey").path)
            let toward: Data?
            if underWay {
                killedMidChange += 1
                toward = change == .decrypt || (change == .rotate && run % 3 == 0) ? change.old : change.new
                if toward == change.old { wentBack += 1 }
            } else {
                let records = try String(contentsOf: folder.appendingPathComponent("records"), encoding: .utf8)
                let done = records.contains("encryption") == (change.new != nil)
                    && (change.new.map { records.contains(Encryption.aes256gcm(key: $0).keyID) } ?? true)
                if done { afterEnd += 1 } else { beforeStart += 1 }
                toward = done ? change.new : change.old
            }
            let other = toward == change.new ? change.old : change.new
            let problems = try await Self.checkFinished(folder, with: toward, other: other, expected: expected)
            #expect(problems == [], "run \(run) (\(change.rawValue), killed \(delay) µs in, \(underWay ? "under way" : "not under way")): \(problems)")
        }
        let summary = "key rotation crash test: \(Self.kills) runs, \(killedMidChange) killed mid-change (\(wentBack) then gone back), "
            + "\(beforeStart) before it began, \(afterEnd) after it ended; "
            + Change.allCases.map { "\(runs[$0] ?? 0) \($0.rawValue) (\((duration[$0] ?? 0) / 1_000) ms whole at last)" }.joined(separator: ", ")
        print(summary)
        #expect(killedMidChange + beforeStart + afterEnd == Self.kills)
        #expect(killedMidChange * 5 >= Self.kills * 2, "too few kills landed mid-change: \(summary)")
        #expect(wentBack > 0 && wentBack < killedMidChange, "both directions must be finished: \(summary)")
    }

    /// Runs `rekey` for `change` on the folder at `path`, killing it `killAfter`
    /// microseconds after it says `changing` (or letting it end, within a minute),
    /// on a thread of its own (see ``offThePool(_:)``).
    func runHelper(_ path: String, _ change: Change, killAfter: UInt32?) async throws -> Outcome {
        try await offThePool { try Self.runHelper(path, change, killAfter: killAfter) }
    }

    static func runHelper(_ path: String, _ change: Change, killAfter: UInt32?) throws -> Outcome {
        let hex = { (key: Data?) in key.map { $0.map { String(format: "%02x", $0) }.joined() } ?? "plain" }
        let process = Process()
        process.executableURL = ProcessTests.helper
        process.arguments = ["rekey", path, hex(change.old), hex(change.new)]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        var bytes = Data()
        if let killAfter {
            // Wait for `changing` (or the end of its output), then give it `killAfter` µs.
            while !String(decoding: bytes, as: UTF8.self).contains("changing\n") {
                let more = pipe.fileHandleForReading.availableData
                if more.isEmpty { break }
                bytes += more
            }
            usleep(killAfter)
            kill(process.processIdentifier, SIGKILL)
        } else {
            let deadline = Date().addingTimeInterval(60)
            while process.isRunning && Date() < deadline { usleep(2_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        bytes += pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        // Only whole lines count: the kill may cut the last one.
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        return Outcome(lines: lines, killed: process.terminationReason == .uncaughtSignal, status: process.terminationStatus)
    }
}
