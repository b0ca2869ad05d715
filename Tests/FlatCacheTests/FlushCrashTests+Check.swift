@testable import FlatCache
import Foundation
import Testing

/// What ``FlushCrashTests`` checks after each kill.
extension FlushCrashTests {
    /// Checks the raw message files, before a load may finish or cut any: each
    /// is whole, or one of the two states a crash may leave (a replace cut
    /// between its renames, its new sidecar complete in its temporary file; an
    /// append cut before its sidecar, which names a prefix of the file).
    func checkFiles(in messages: URL, into tally: inout Tally) throws {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: messages.path)) ?? []
        for name in names.sorted() {
            let url = messages.appendingPathComponent(name)
            if name.hasPrefix(".") {
                tally.temporaryFiles += 1
            } else if name.hasSuffix(".lines.sha256") {
                let dataName = String(name.dropLast(".sha256".count))
                guard !names.contains(dataName) else { continue }
                // A removal cut between the data file and its sidecar.
                tally.sidecarsWithoutData += 1
                if (try? Sidecar.digest(in: Data(contentsOf: url), name: dataName)) == nil {
                    tally.tornFiles += 1
                    Issue.record("\(name), left without its data file, is not a whole sidecar line")
                }
            } else if name.hasSuffix(".lines") {
                try checkDataFile(url, into: &tally)
            } else {
                Issue.record("unexpected file messages/\(name)")
            }
        }
    }

    private func checkDataFile(_ url: URL, into tally: inout Tally) throws {
        let name = url.lastPathComponent
        let data = try Data(contentsOf: url)
        let sidecar = try? Data(contentsOf: url.appendingPathExtension("sha256"))
        let waiting = try? Data(contentsOf: url.deletingLastPathComponent().appendingPathComponent(".\(name).sha256.tmp"))
        let whole: Data
        if sidecar == Self.sidecarLine(for: data, name: name) {
            whole = data
        } else if waiting == Self.sidecarLine(for: data, name: name) {
            tally.replacesCutBetweenRenames += 1
            whole = data
        } else if let sidecar, let prefix = Self.prefix(of: data, namedBy: sidecar, name: name) {
            tally.appendsCutShort += 1
            whole = prefix
        } else {
            tally.tornFiles += 1
            Issue.record("messages/\(name) is torn: its sidecar names neither it nor a prefix of it, and no sidecar waits")
            return
        }
        tally.filesChecked += 1
        // Canonical lines, then appended ones (format 2): the records they leave.
        guard let found = try? RecordLines.decode(whole, sealer: nil, fileName: name),
            let canonical = try? found.records.map({ try ChatMessage(serializedData: $0) }),
            let appended = try? found.appended.map({ line throws -> AppendedMerge.Line<ChatMessage> in
                line.kind == .upsert ? .upsert(try ChatMessage(serializedData: line.record)) : .deletion(line.record, line: 0)
            }),
            let lines = try? AppendedMerge.records(canonical, appended: appended)
        else {
            tally.tornFiles += 1
            Issue.record("messages/\(name) matches its sidecar but does not decode")
            return
        }
        if !found.appended.isEmpty { tally.filesWithAppendedLines += 1 }
        if lines.count > Self.limit { tally.filesOverTheLimit += 1 }
        #expect(lines.count <= Self.limit + Self.slack, "messages/\(name) holds \(lines.count) records")
    }

    /// The `sha256sum` line a sidecar of `data` holds.
    static func sidecarLine(for data: Data, name: String) -> Data {
        Data("\(SHA256Digest(of: data).hex)  \(name)\n".utf8)
    }

    /// The shorter prefix of `data`, empty or ending with a line, whose sidecar is `sidecar`.
    static func prefix(of data: Data, namedBy sidecar: Data, name: String) -> Data? {
        let ends = [data.startIndex] + data.indices.filter { data[$0] == 0x0A }.map { $0 + 1 }
        for end in ends where end < data.endIndex {
            let prefix = Data(data[data.startIndex..<end])
            if sidecarLine(for: prefix, name: name) == sidecar { return prefix }
        }
        return nil
    }

    /// Opens the folder with a fresh cache, loads every channel, and checks
    /// each against the contents ``FlushModel`` allows after `report`;
    /// returns what was loaded (the next run starts from it).
    func checkChannels(
        in folder: URL, after report: FlushReport, model: FlushModel, round: Int, into tally: inout Tally
    ) throws -> [[ChatMessage]?] {
        let damage = DamageRecorder()
        var configuration = damage.configuration()
        configuration.maxMessagesPerChannel = Self.limit
        let cache = try ChatCache(directory: folder, configuration: configuration)
        let allowed = model.allowedStates(after: report)
        var loaded = [[ChatMessage]?]()
        for channel in 0..<FlushModel.channelCount {
            let state = try cache.messages.loadIfCached(in: FlushModel.url(channel))
            loaded.append(state)
            check(state, channel: channel, allowed: allowed[channel], round: round, into: &tally)
        }
        tally.damagedFiles += damage.files.count
        for file in damage.files { Issue.record("kill \(round + 1): damaged file reported: \(file.path): \(file.problem)") }
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("quarantine").path))
        // The loads finished every replace and cut every append a crash left: now each sidecar names its whole file.
        let messages = folder.appendingPathComponent("messages")
        for name in (try? FileManager.default.contentsOfDirectory(atPath: messages.path)) ?? [] where name.hasSuffix(".lines") {
            let data = try Data(contentsOf: messages.appendingPathComponent(name))
            let sidecar = try? Data(contentsOf: messages.appendingPathComponent(name + ".sha256"))
            #expect(sidecar == Self.sidecarLine(for: data, name: name), "kill \(round + 1): messages/\(name) after the loads")
        }
        return loaded
    }

    /// Checks one channel: loaded as one of the `allowed` contents (the
    /// first is the one at the last flush), and each flushed message present,
    /// or changed by a later operation that landed.
    private func check(
        _ state: [ChatMessage]?, channel: Int, allowed: [[ChatMessage]?], round: Int, into tally: inout Tally
    ) {
        let flushed = allowed[0] ?? []
        let messages = state ?? []
        tally.flushedMessagesChecked += flushed.count
        guard let match = allowed.firstIndex(where: { $0 == state }) else {
            tally.channelsNotAllowed += 1
            let missing = flushed.filter { !messages.contains($0) }
            tally.flushedMessagesMissing += missing.count
            Issue.record(
                """
                kill \(round + 1), channel \(channel): loaded \(Self.describe(state)); at the last flush it held \
                \(Self.describe(allowed[0])), and none of the \(allowed.count - 1) operations on it since gives what was \
                loaded; flushed messages missing: \(Self.describe(missing))
                """)
            return
        }
        if match == 0 { tally.channelsAsFlushed += 1 } else { tally.channelsAfterLaterOperations += 1 }
        for message in flushed {
            if messages.contains(message) {
                tally.flushedMessagesPresent += 1
            } else if messages.contains(where: { $0.messageID == message.messageID }) {
                tally.flushedMessagesEditedLater += 1
            } else if messages.count(where: { ($0.createdAt, $0.messageID) > (message.createdAt, message.messageID) })
                >= Self.limit
            {
                tally.flushedMessagesDroppedByRetentionLater += 1
            } else {
                tally.flushedMessagesRemovedLater += 1
            }
        }
    }

    /// A channel's content in brief: `nil`, or its messages as `id/version`.
    static func describe(_ state: [ChatMessage]?) -> String {
        guard let state else { return "nothing (no file)" }
        return "[" + state.map { "\($0.messageID)/\($0.text.split(separator: " ").last ?? "?")" }.joined(separator: " ") + "]"
    }
}
