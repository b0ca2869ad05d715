import ArgumentParser
import FlatCache
import Foundation

struct Info: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show what a cache holds: format, channels, message files, messages, users, bytes, message times.")

    @OptionGroup var options: CacheOptions

    struct Report: Codable {
        var formatVersion = 1
        var channels: Int
        var messageFiles: Int
        var messages: Int
        var users: Int
        var bytesOnDisk: Int
        var oldestMessageAt: Int64?
        var newestMessageAt: Int64?
    }

    func run() throws {
        let cache = try options.openExisting()
        let messages = try cache.messages.loadAll()
        let messageFolder = options.url.appendingPathComponent("messages").path
        let messageFiles = ((try? FileManager.default.contentsOfDirectory(atPath: messageFolder)) ?? [])
            .filter { $0.hasSuffix(".lines") && !$0.hasPrefix(".") }
        let report = Report(
            channels: try cache.channels.load().count, messageFiles: messageFiles.count, messages: messages.count,
            users: try cache.users.load().count, bytesOnDisk: Self.bytes(below: options.url),
            oldestMessageAt: messages.map(\.createdAt).min(), newestMessageAt: messages.map(\.createdAt).max())
        if options.json { return try Output.json(report) }
        Output.table([
            ["format", "flatcache \(report.formatVersion)"],
            ["channels", "\(report.channels)"],
            ["message files", "\(report.messageFiles)"],
            ["messages", "\(report.messages)"],
            ["users", "\(report.users)"],
            ["bytes on disk", "\(report.bytesOnDisk)"],
            ["oldest message", report.oldestMessageAt.map(Output.time) ?? "none"],
            ["newest message", report.newestMessageAt.map(Output.time) ?? "none"],
        ])
    }

    /// The sizes of all regular files below `folder`.
    static func bytes(below folder: URL) -> Int {
        let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.fileSizeKey, .isRegularFileKey])
        var total = 0
        while let url = walker?.nextObject() as? URL {
            let values = try? url.resourceValues(forKeys: [.fileSizeKey, .isRegularFileKey])
            if values?.isRegularFile == true { total += values?.fileSize ?? 0 }
        }
        return total
    }
}
