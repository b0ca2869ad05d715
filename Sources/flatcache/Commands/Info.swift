import ArgumentParser
import FlatCache
import Foundation

struct Info: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show what a cache holds: format, record types, encryption, channels, message files, messages, users, outbox entries, files, bytes, quarantined bytes, message times.",
        discussion: HelpText.paragraphs(
            """
            Prints one row each: the format version, the record types, the encryption (its key id, \
            or none), the channels, message files, messages and users cached, the outbox entries \
            (messages queued to send), the files and bytes on disk (sidecars and quarantine/ \
            included), the bytes moved aside into quarantine/, and the oldest and newest message \
            times (UTC). --json prints the same as one object.
            """,
            """
            An encrypted folder shows its key id. Without --key-file it shows what it shows for \
            other record types (lines are records, so the counts hold), since no record is opened, \
            and says so on standard error. For a folder written with other record types it shows \
            its record types, counts, bytes and when its files were last saved; it cannot decode \
            their messages' times or outbox entries.
            """,
            HelpText.readsOnly,
            HelpText.readExitStatus,
            HelpText.examples(
                "flatcache info ~/.cache/flatcache-demo",
                "flatcache info ~/.cache/flatcache-demo --json",
                "flatcache info Chat.cache --key-file chat.key")))

    @OptionGroup var options: CacheOptions

    struct Report: Codable {
        var formatVersion = 1
        /// `nil` for a folder written before it recorded them.
        var recordTypes: RecordTypes?
        /// Whether the folder's lines are sealed (AES-256-GCM).
        var encrypted: Bool
        /// The id of the key that seals them; left out for a plain folder.
        var keyID: String?
        var channels: Int
        var messageFiles: Int
        var messages: Int
        var users: Int
        /// The messages queued to send (pending, sending or failed); `nil` for a
        /// folder of other record types, whose outbox lines the tool cannot decode.
        var outboxEntries: Int?
        var bytesOnDisk: Int
        /// Every file in the folder, sidecars and `quarantine/` included.
        var filesOnDisk: Int
        /// The bytes of the files moved aside into `quarantine/`.
        var quarantinedBytes: Int
        var oldestMessageAt: Int64?
        var newestMessageAt: Int64?
        /// Only for a folder of other record types, whose message times cannot be decoded.
        var lastSavedAt: Int64?
    }

    func run() async throws {
        try await options.read({ cache in
            let outbox = try await cache.outbox.entries().count
            try show(try report(of: cache, outboxEntries: outbox))
        }, otherTypes: { summary in
            try show(report(of: summary), outboxNotDecoded: "not decoded (other record types)")
        }, withoutKey: { summary in
            Output.error(
                "This folder is encrypted with key \(summary.keyID ?? "?"); without --key-file flatcache opens no record, "
                    + "so it shows lines (one per record), bytes and times.")
            try show(report(of: summary), outboxNotDecoded: "not opened (encrypted; give --key-file)")
        })
    }

    /// What a folder holds by its lines, for records the tool cannot decode
    /// (other record types) or open (no key): counts, bytes and times.
    private func report(of summary: CacheFolderSummary) -> Report {
        func records(_ role: CacheFolderSummary.Role) -> Int {
            summary.files.filter { $0.role == role && $0.problem == nil }.map(\.records).reduce(0, +)
        }
        let disk = Self.files(below: options.url)
        return Report(
            recordTypes: summary.recordTypes, encrypted: summary.keyID != nil, keyID: summary.keyID,
            channels: records(.channels), messageFiles: summary.files.filter { $0.role == .messages }.count,
            messages: records(.messages), users: records(.users), bytesOnDisk: disk.bytes, filesOnDisk: disk.files,
            quarantinedBytes: Self.files(below: options.url.appendingPathComponent("quarantine")).bytes,
            lastSavedAt: summary.files.map(\.modifiedAt).max())
    }

    /// What the cache holds, read with the stores' synchronous calls.
    private func report(of cache: Cache, outboxEntries: Int) throws -> Report {
        let summary = try CacheFolderSummary.read(directory: options.url)
        let messages = try cache.messages.blocking.loadAll()
        // The on-disk part of the library's statistics, taken after the loads (which may move a damaged file aside).
        let disk = try cache.blocking.statistics()
        return Report(
            recordTypes: summary.recordTypes, encrypted: summary.keyID != nil, keyID: summary.keyID,
            channels: try cache.channels.blocking.load().count,
            messageFiles: summary.files.filter { $0.role == .messages }.count, messages: messages.count,
            users: try cache.users.blocking.load().count, outboxEntries: outboxEntries, bytesOnDisk: disk.diskBytes,
            filesOnDisk: disk.diskFiles, quarantinedBytes: disk.quarantinedBytes,
            oldestMessageAt: messages.map(\.createdAt).min(), newestMessageAt: messages.map(\.createdAt).max())
    }

    private func show(_ report: Report, outboxNotDecoded: String = "") throws {
        if options.json { return try Output.json(report) }
        var rows = [
            ["format", "flatcache \(report.formatVersion)"],
            ["record types", report.recordTypes.map { "\($0)" } ?? "not recorded (written before FlatCache recorded them)"],
            ["encryption", report.keyID.map { "aes-256-gcm, key \($0)" } ?? "none"],
            ["channels", "\(report.channels)"],
            ["message files", "\(report.messageFiles)"],
            ["messages", "\(report.messages)"],
            ["users", "\(report.users)"],
            ["outbox", report.outboxEntries.map { "\($0) queued to send" } ?? outboxNotDecoded],
            ["files on disk", "\(report.filesOnDisk)"],
            ["bytes on disk", "\(report.bytesOnDisk)"],
            ["quarantined", "\(report.quarantinedBytes) bytes"],
        ]
        if let lastSavedAt = report.lastSavedAt {
            rows.append(["last saved", Output.time(lastSavedAt)])
        } else {
            rows.append(["oldest message", report.oldestMessageAt.map(Output.time) ?? "none"])
            rows.append(["newest message", report.newestMessageAt.map(Output.time) ?? "none"])
        }
        Output.table(rows)
    }

    /// How many regular files are below `folder`, and their bytes.
    static func files(below folder: URL) -> (files: Int, bytes: Int) {
        let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.fileSizeKey, .isRegularFileKey])
        var total = (files: 0, bytes: 0)
        while let url = walker?.nextObject() as? URL {
            let values = try? url.resourceValues(forKeys: [.fileSizeKey, .isRegularFileKey])
            if values?.isRegularFile == true { total = (total.files + 1, total.bytes + (values?.fileSize ?? 0)) }
        }
        return total
    }
}
