import ArgumentParser
import FlatCache
import Foundation

struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Build or update a cache from JSON Lines (as `flatcache export` prints them).",
        discussion: "Reads standard input, or --file. Every line is checked before anything is written; a bad line stops the import with its line number. Records go in through the library, with its rules: unsent messages and open channels are left out, each channel keeps its most recent messages. This is how to build a preloaded cache to ship inside an app.")

    @Argument(help: "The cache folder (created when missing).")
    var directory: String

    @Flag(help: "Print JSON for scripts instead of text for people.")
    var json = false

    @Option(help: "Read this file instead of standard input.")
    var file: String?

    struct Report: Codable {
        var channels: Int
        var messages: Int
        var users: Int
        var recordsLeftOut: Int
    }

    func run() throws {
        let input: Data
        if let file {
            guard let data = FileManager.default.contents(atPath: file) else { throw ToolError("Cannot read \(file).") }
            input = data
        } else {
            input = FileHandle.standardInput.readDataToEndOfFile()
        }
        var channels = [ChatChannel]()
        var messages = [ChatMessage]()
        var users = [ChatUser]()
        let lines = input.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        let decoder = JSONDecoder()
        for (index, line) in lines.enumerated() {
            Output.progress("read lines", index + 1, lines.count)
            if line.isEmpty && index == lines.count - 1 { break }  // the final newline
            do {
                switch try decoder.decode(ExportLine.self, from: Data(line)) {
                case .channel(let channel): channels.append(channel)
                case .message(let message): messages.append(message)
                case .user(let user): users.append(user)
                }
            } catch {
                throw ToolError("Line \(index + 1) is not a channel, message or user: \(Self.reason(error)).")
            }
        }
        let cache = try ChatCache(directory: URL(fileURLWithPath: directory), configuration: Configuration(logger: Output.quietLogger))
        let saved = try cache.channels.save(channels) + cache.messages.save(messages) + cache.users.save(users)
        let report = Report(
            channels: channels.count, messages: messages.count, users: users.count, recordsLeftOut: saved.recordsLeftOut)
        if json { return try Output.json(report) }
        func count(_ number: Int, _ noun: String) -> String { "\(number) \(noun)\(number == 1 ? "" : "s")" }
        print("Imported \(count(report.channels, "channel")), \(count(report.messages, "message")) and "
            + "\(count(report.users, "user")) into \(directory) (\(report.recordsLeftOut) left out by the caching rules).")
    }

    /// A short reason for a decoding error, without Foundation's long context.
    static func reason(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): "\"\(key.stringValue)\" is missing"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            "\"\(context.codingPath.map(\.stringValue).joined(separator: "."))\" has the wrong type"
        case DecodingError.dataCorrupted(let context):
            context.codingPath.isEmpty ? "not valid JSON" : "\"\(context.codingPath.map(\.stringValue).joined(separator: "."))\" is not valid"
        default: "\(error)"
        }
    }
}
