@testable import FlatCache
import Foundation
import Testing

/// kill -9 of a process at random moments while it queues messages in the
/// outbox and delivers them to a server that loses answers after acting:
/// every message `send` returned for reaches the server exactly once, in
/// its channel's order, and the outbox file is whole after every kill.
///
/// `swift test` kills 100 times; `FLATCACHE_OUTBOX_KILLS=1000 swift test --filter OutboxCrashTests` runs more.
@Suite(.serialized) struct OutboxCrashTests {
    static var kills: Int { ProcessInfo.processInfo.environment["FLATCACHE_OUTBOX_KILLS"].flatMap(Int.init) ?? 100 }

    @Test(.timeLimit(.minutes(5)))
    func killedAtRandomMomentsEveryAcceptedMessageReachesTheServerOnceInOrder() async throws {
        let folder = try TemporaryFolder()
        let server = try TemporaryFolder()
        var accepted = [String]()
        var killedMidRun = 0
        var random = SystemRandomNumberGenerator()
        for run in 0..<Self.kills {
            let output = try await runHelper(folder, server, run: run, count: 20, killAfter: .random(in: 5_000...120_000, using: &random))
            accepted += output.lines.compactMap { $0.hasPrefix("accepted ") ? String($0.dropFirst(9)) : nil }
            if !output.lines.contains("drained") { killedMidRun += 1 }
            try checkOutboxFile(in: folder)
        }
        // A last process, not killed, delivers what is left.
        let last = try await runHelper(folder, server, run: Self.kills, count: 0, killAfter: nil)
        #expect(last.lines.contains("drained"), "the last run did not drain the outbox: \(last.lines)")
        #expect(!FileManager.default.fileExists(atPath: folder.appending("outbox.lines").path))

        // No log means the server made no message: under ThreadSanitizer beside the whole suite every
        // run was once killed before it accepted one. Once one was accepted, the log must be there.
        let log = server.appending("server.log")
        let made = (accepted.isEmpty && !FileManager.default.fileExists(atPath: log.path) ? "" : try String(contentsOf: log, encoding: .utf8))
            .split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        let requestIDs = made.map { $0[0] }
        #expect(Set(requestIDs).count == requestIDs.count, "a message was made twice")
        let missing = Set(accepted).subtracting(requestIDs)
        #expect(missing.isEmpty, "accepted but never made: \(missing.sorted())")
        // Each channel's messages were made in the order queued: run, then sequence.
        for channel in ["c0", "c1", "c2"] {
            let order = made.filter { $0[1] == channel }.map { Self.position($0[0]) }
            #expect(order == order.sorted(), "channel \(channel) made out of order: \(order)")
        }
        print("outbox crash test: \(Self.kills) runs, \(killedMidRun) killed before draining, \(accepted.count) accepted, \(requestIDs.count) made")
        #expect(killedMidRun > Self.kills / 2, "the kills came too late to test anything")
    }

    /// `r<run>-<seq>` as one number that sorts by run, then sequence.
    static func position(_ requestID: String) -> Int {
        let parts = requestID.dropFirst().split(separator: "-").compactMap { Int($0) }
        return parts.count == 2 ? parts[0] * 1_000_000 + parts[1] : -1
    }

    /// Runs `outbox-churn` and kills it after `killAfter` microseconds (or lets it end, within a minute),
    /// waiting on a thread of its own (see ``offThePool(_:)``).
    func runHelper(
        _ folder: TemporaryFolder, _ server: TemporaryFolder, run: Int, count: Int, killAfter: UInt32?
    ) async throws -> (lines: [String], status: Int32) {
        let (cache, files) = (folder.url.path, server.url.path)
        return try await offThePool { try Self.runHelper(cache, files, run: run, count: count, killAfter: killAfter) }
    }

    static func runHelper(
        _ folder: String, _ server: String, run: Int, count: Int, killAfter: UInt32?
    ) throws -> (lines: [String], status: Int32) {
        let process = Process()
        process.executableURL = ProcessTests.helper
        process.arguments = ["outbox-churn", folder, server, "\(run)", "\(count)"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        if let killAfter {
            usleep(killAfter)
            kill(process.processIdentifier, SIGKILL)
        } else {
            let deadline = Date().addingTimeInterval(60)
            while process.isRunning && Date() < deadline { usleep(10_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        let bytes = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        // Only whole lines count: the kill may cut the last one.
        let text = String(decoding: bytes, as: UTF8.self)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        return (lines, process.terminationStatus)
    }

    /// The outbox file's sidecar names its bytes (or a prefix an unfinished
    /// append left, which the next read cuts off) and every line decodes.
    func checkOutboxFile(in folder: TemporaryFolder) throws {
        let file = RecordFile(path: folder.appending("outbox.lines").path)
        guard FileManager.default.fileExists(atPath: file.path) else { return }
        let (found, _, _) = try file.check(finishing: false)
        guard case .body(let bytes) = found else {
            Issue.record("the outbox file is damaged after a kill: \(found)")
            return
        }
        for line in try RecordLines.decode(bytes) { _ = try OutboxRecord<ChatMessage>(serializedData: line) }
    }
}
