@testable import FlatCache
import Foundation
import Testing

/// kill -9 at random moments while another process saves, replaces, applies
/// change logs and removes: after every kill each file on disk is complete
/// (old or new, never torn), every load returns only records that were
/// saved, and loads throw nothing but `FlatCacheError`.
///
/// `swift test` kills 6 times per durability; `FLATCACHE_CRASH_KILLS=200 swift test --filter CrashTests`
/// runs the full campaign.
@Suite(.serialized) struct CrashTests {
    static var kills: Int { ProcessInfo.processInfo.environment["FLATCACHE_CRASH_KILLS"].flatMap(Int.init) ?? 6 }

    /// What one campaign saw.
    struct Tally: CustomStringConvertible {
        var kills = 0
        var filesChecked = 0
        var tornFiles = 0
        var recordsChecked = 0
        var foreignRecords = 0
        var missesAfterACrashBetweenRenames = 0
        var temporaryFilesFound = 0
        var description: String {
            "\(kills) kills, \(filesChecked) files checked, \(tornFiles) torn, \(recordsChecked) records loaded, "
                + "\(foreignRecords) not saved by the writer, \(missesAfterACrashBetweenRenames) pairs read as a miss "
                + "(crash between data and sidecar rename), \(temporaryFilesFound) temporary files found and ignored"
        }
    }

    /// Whether `message` is one the churn helper could have written in channel `channel`.
    static func isSaved(_ message: ChatMessage, channel: Int) -> Bool {
        let prefix = "channel \(channel) message \(message.messageID) version "
        return message.channelURL == "crash-channel-\(channel)" && message.createdAt == 1_000 * message.messageID
            && (1...80).contains(message.messageID) && message.text.hasPrefix(prefix)
            && Int(message.text.dropFirst(prefix.count)).map { (0..<1_000).contains($0) } == true
            && message.sender == nil && message.channelKind == .group
    }

    @Test(.timeLimit(.minutes(5)), arguments: ["atomic", "synchronized"])
    func killedAtRandomMomentsEveryFileStaysWhole(durability: String) throws {
        let folder = try TemporaryFolder()
        _ = try ChatCache(directory: folder.url)
        var tally = Tally()
        var random = SystemRandomNumberGenerator()
        for round in 0..<Self.kills {
            let process = Process()
            process.executableURL = ProcessTests.helper
            process.arguments = ["churn", folder.url.path, "\(round + 1)", durability]
            try process.run()
            usleep(UInt32.random(in: 5_000...60_000, using: &random))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            #expect(process.terminationReason == .uncaughtSignal, "the writer stopped by itself: \(process.terminationStatus)")
            tally.kills += 1
            try check(folder, into: &tally)
        }
        print("crash test (\(durability)): \(tally)")
        #expect(tally.tornFiles == 0)
        #expect(tally.foreignRecords == 0)
    }

    /// Whether a message file's lines all decode: canonical and `*` lines as messages, `-` lines as a
    /// message id's 8 bytes (format 2).
    static func decodes(_ bytes: Data, name: String) -> Bool {
        guard let lines = try? RecordLines.decode(bytes, sealer: nil, fileName: name) else { return false }
        let upserts = lines.appended.filter { $0.kind == .upsert }.map(\.record)
        guard lines.appended.allSatisfy({ $0.kind == .upsert || $0.record.count == 8 }) else { return false }
        return (try? (lines.records + upserts).map { try ChatMessage(serializedData: $0) }) != nil
    }

    /// Checks the raw files first (before a load may move any aside), then loads through the API.
    func check(_ folder: TemporaryFolder, into tally: inout Tally) throws {
        let messages = folder.appending("messages")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: messages.path)) ?? []
        for name in names {
            if name.hasPrefix(".") {
                tally.temporaryFilesFound += 1
                continue
            }
            tally.filesChecked += 1
            let bytes = try Data(contentsOf: messages.appendingPathComponent(name))
            if name.hasSuffix(".sha256") {
                if (try? Sidecar.digest(in: bytes, name: String(name.dropLast(7)))) == nil { tally.tornFiles += 1 }
            } else if !Self.decodes(bytes, name: name) {
                tally.tornFiles += 1
            }
        }
        let recorder = LogRecorder()
        let cache = try ChatCache(directory: folder.url, configuration: Configuration(maxMessagesPerChannel: 40, logger: recorder.logger))
        for channel in 0..<8 {
            let loaded = try cache.messages.load(in: "crash-channel-\(channel)")  // throws only FlatCacheError
            tally.recordsChecked += loaded.count
            tally.foreignRecords += loaded.filter { !Self.isSaved($0, channel: channel) }.count
        }
        _ = try cache.users.load()
        // Damage is logged as a warning (a journal's replay, format 2, only as a notice).
        let damage = recorder.entries.filter { $0.level == .warning }
        tally.missesAfterACrashBetweenRenames += damage.count
        for entry in damage {
            // The only corruption a crash may leave: a data file newer than its sidecar.
            #expect(entry.metadata["reason"]?.contains("the sidecar says") == true, "\(entry.metadata)")
        }
    }
}
