@testable import FlatCache
import Foundation
import Testing

/// kill -9 at random moments while another process saves through the
/// `async` API with write-behind on and calls `flush()`: after every kill
/// each file is whole, and every message on disk when the last `flush()`
/// returned is still there, unless an operation started after that flush
/// changed it and landed.
///
/// The helper (`flush-churn`) prints each operation before it starts it and
/// `flushed <count>` after each `flush()` returns; the checker replays those
/// operations on ``FlushModel`` and requires each channel to load as exactly
/// the content it had at the last flush or after one of the later operations
/// on it. SIGKILL ends only the process: what it wrote is in the page cache
/// and stays, so "flushed means present" holds exactly, for both durabilities.
///
/// `swift test` kills 100 times per durability (200 in all);
/// `FLATCACHE_FLUSH_KILLS=<n> swift test --filter FlushCrashTests` kills `n` times per durability.
@Suite(.serialized) struct FlushCrashTests {
    static var kills: Int { ProcessInfo.processInfo.environment["FLATCACHE_FLUSH_KILLS"].flatMap(Int.init) ?? 100 }
    /// The helper's `maxMessagesPerChannel`: its append channels pass it, into the slack and to compaction.
    static let limit = 16
    static var slack: Int { MessageStore<ChatMessage>.slack(forLimit: limit) }
    /// The memory limit of every other run: a few summaries, few records.
    static let smallMemory = 3_000

    /// What one campaign saw.
    struct Tally: CustomStringConvertible {
        var kills = 0
        var operations = 0
        var flushes = 0
        var runsWithoutAFlush = 0
        /// Messages each channel held when the last `flush()` returned (or at the start of a run without one).
        var flushedMessagesChecked = 0
        var flushedMessagesPresent = 0
        var flushedMessagesEditedLater = 0
        var flushedMessagesDroppedByRetentionLater = 0
        var flushedMessagesRemovedLater = 0
        var flushedMessagesMissing = 0
        var channelsAsFlushed = 0
        var channelsAfterLaterOperations = 0
        var channelsNotAllowed = 0
        var filesChecked = 0
        var filesOverTheLimit = 0
        var tornFiles = 0
        var appendsCutShort = 0
        var replacesCutBetweenRenames = 0
        var sidecarsWithoutData = 0
        var temporaryFiles = 0
        var damagedFiles = 0
        /// Message files found with appended lines (format 2: edits, deletions, older messages).
        var filesWithAppendedLines = 0
        var seconds = 0.0

        var description: String {
            "\(kills) kills in \(String(format: "%.1f", seconds)) s, \(operations) operations and \(flushes) flushes "
                + "(\(runsWithoutAFlush) runs killed before their first flush); "
                + "\(flushedMessagesChecked) flushed messages checked: \(flushedMessagesPresent) present as flushed, "
                + "\(flushedMessagesEditedLater) edited, \(flushedMessagesDroppedByRetentionLater) dropped by retention "
                + "and \(flushedMessagesRemovedLater) deleted or replaced by later operations that landed, "
                + "\(flushedMessagesMissing) missing; channels: \(channelsAsFlushed) as flushed, "
                + "\(channelsAfterLaterOperations) after later operations, \(channelsNotAllowed) in no allowed state; "
                + "\(filesChecked) files checked, \(tornFiles) torn, \(filesOverTheLimit) over the limit within the slack, "
                + "\(appendsCutShort) appends cut short, \(replacesCutBetweenRenames) replaces cut between the renames, "
                + "\(sidecarsWithoutData) sidecars without data (a removal cut short), \(temporaryFiles) temporary files, "
                + "\(damagedFiles) damaged files reported, \(filesWithAppendedLines) files with appended lines"
        }
    }

    @Test(.timeLimit(.minutes(5)), arguments: ["atomic", "synchronized"])
    func killedAfterFlushesEveryFlushedMessageIsOnDisk(durability: String) async throws {
        let folder = try TemporaryFolder()
        let cacheFolder = folder.appending("cache")
        var model = FlushModel(limit: Self.limit)
        var tally = Tally()
        var random = SystemRandomNumberGenerator()
        let clock = ContinuousClock()
        let start = clock.now
        for round in 0..<Self.kills {
            // Given a writer that saves, writes behind and flushes
            let output = folder.appending("output-\(round)")
            let errors = folder.appending("errors-\(round)")
            let process = Process()
            process.executableURL = ProcessTests.helper
            // Every other run with a memory tier too small for the records: edits then go to files memory
            // keeps only a summary of, appended without reading them (format 2).
            let limits = round.isMultiple(of: 2) ? "\(Self.limit)" : "\(Self.limit):\(Self.smallMemory)"
            process.arguments = ["flush-churn", cacheFolder.path, "\(round + 1)", durability, limits]
            let outputHandle = try Self.newFile(output)
            let errorHandle = try Self.newFile(errors)
            process.standardOutput = outputHandle
            process.standardError = errorHandle
            try process.run()

            // When it is killed at a random moment (waits suspend: the campaign holds no thread of Swift's pool)
            try await Task.sleep(for: .microseconds(Int.random(in: 20_000...300_000, using: &random)))
            kill(process.processIdentifier, SIGKILL)
            try await Self.exit(of: process)
            try outputHandle.close()
            try errorHandle.close()
            let complaint = String(decoding: try Data(contentsOf: errors), as: UTF8.self)
            #expect(
                process.terminationReason == .uncaughtSignal,
                "the writer stopped by itself (\(process.terminationStatus)): \(complaint)")
            tally.kills += 1

            // Then every file is whole and every channel holds what the flushes promised
            let report = try FlushReport(Data(contentsOf: output))
            tally.operations += report.operations.count
            tally.flushes += report.flushes
            if report.flushes == 0 { tally.runsWithoutAFlush += 1 }
            try checkFiles(in: cacheFolder.appendingPathComponent("messages"), into: &tally)
            model.channels = try checkChannels(in: cacheFolder, after: report, model: model, round: round, into: &tally)
            try FileManager.default.removeItem(at: output)
            try FileManager.default.removeItem(at: errors)
        }
        tally.seconds = Double((clock.now - start).components.seconds)
            + Double((clock.now - start).components.attoseconds) / 1e18
        print("flush crash test (\(durability)): \(tally)")
        #expect(tally.tornFiles == 0)
        #expect(tally.channelsNotAllowed == 0)
        #expect(tally.flushedMessagesMissing == 0)
        #expect(tally.damagedFiles == 0)
        // The campaign tried what it is about: flushes, and files in their slack.
        #expect(tally.flushes > 0 && tally.flushedMessagesChecked > 0)
        #expect(tally.filesOverTheLimit > 0 || Self.kills < 20)
        #expect(tally.filesWithAppendedLines > 0 || Self.kills < 20)
    }

    /// Waits (up to 10 seconds) until `process` has ended, polling, so that no thread blocks meanwhile.
    static func exit(of process: Process) async throws {
        for _ in 0..<10_000 where process.isRunning { try await Task.sleep(for: .milliseconds(1)) }
        #expect(!process.isRunning, "the writer outlived SIGKILL by 10 seconds")
    }

    static func newFile(_ url: URL) throws -> FileHandle {
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else { throw CocoaError(.fileWriteUnknown) }
        return try FileHandle(forWritingTo: url)
    }
}
