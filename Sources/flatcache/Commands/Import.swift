import ArgumentParser
import FlatCache
import Foundation

struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Build or update a cache from JSON Lines (as `flatcache export` prints them).",
        discussion: HelpText.paragraphs(
            """
            Reads standard input, or --file; lines end with \\n or \\r\\n, and blank lines are \
            skipped. Every line is checked before anything is written (its JSON, and the library's \
            rules: no empty channel URL or user id, a record that can be serialized): a bad line \
            stops the import with "Error: Line N ...", and the folder is left as it was, or not \
            created.
            """,
            """
            Then the records go in through the library, with its rules: unsent messages and open \
            channels (and their messages) are left out, and each channel keeps its newest \
            --max-messages messages (the library's default, 200, unless you say otherwise). \
            Everything left out or dropped is named on standard error: unsent messages, open \
            channels and their messages, and older messages per channel, with the --max-messages \
            that would keep them. Import only adds: it never removes a record or a file. Then it \
            prints what it imported ("Imported N channels, M messages and K users into <folder>."); \
            --json prints it as one object, with what was left out and dropped.
            """,
            """
            Into an empty folder, with the --max-messages the cache was written with, it reproduces \
            an exported cache byte for byte: this is how to build a preloaded cache to ship inside \
            an app. With --key-file the cache is encrypted with that key: a new or empty folder \
            takes it, an encrypted one must have been written with it (sealed lines take fresh \
            nonces, so the bytes differ from run to run).
            """,
            """
            Exit status: 0 imported; 1 an error (one "Error: ..." line on standard error): a bad \
            line, an unreadable --file or key file, the wrong key, or a folder that cannot be \
            written or is not a cache stop it before it writes anything; 2 wrong usage (the error \
            and the usage lines).
            """,
            HelpText.examples(
                "flatcache export ~/.cache/flatcache-demo > cache.jsonl",
                "flatcache import Preloaded.cache --file cache.jsonl",
                "flatcache import Preloaded.cache --file cache.jsonl --max-messages 500",
                "flatcache import Chat.cache --key-file chat.key < chat.jsonl")))

    @Argument(help: "The cache folder (created when missing).")
    var directory: String

    @OptionGroup var key: KeyFileOption

    @Flag(help: "Print JSON for scripts instead of text for people.")
    var json = false

    @Option(help: "Read this file instead of standard input.")
    var file: String?

    @Option(help: "How many of a channel's most recent messages to keep (the library's Configuration.maxMessagesPerChannel).")
    var maxMessages = Configuration.defaultMaxMessagesPerChannel

    func validate() throws {
        guard maxMessages >= 1 else {
            throw ValidationError("Please give --max-messages a number of 1 or more, not \(maxMessages).")
        }
    }

    /// What an import did, for `--json`: distinct records saved by kind, what was left out and dropped.
    struct Report: Codable {
        /// Distinct channels, messages and users handed to the library.
        var channels: Int
        var messages: Int
        var users: Int
        /// Files made sure of by lines of kind "empty".
        var emptyFiles: Int
        /// Left out by the caching rules (unsent messages, open channels and their messages), as the library counts them.
        var recordsLeftOut: Int
        /// What was left out, by reason.
        var leftOut: ImportPlan.LeftOut
        /// The --max-messages in force, and the older messages it dropped, in total and per channel.
        var maxMessages: Int
        var messagesDropped: Int
        var droppedByChannel: [Dropped]
    }

    /// Older messages one channel dropped to stay within --max-messages.
    struct Dropped: Codable {
        var channelURL: String
        var dropped: Int
    }

    func run() throws {
        let input: Data
        if let file {
            guard let data = FileManager.default.contents(atPath: file) else { throw ToolError("Cannot read \(file).") }
            input = data
        } else {
            input = FileHandle.standardInput.readDataToEndOfFile()
        }
        let encryption = try key.encryption()
        let plan = try ImportPlan(reading: input) { Output.progress("read lines", $0, $1) }
        try ImportTarget(path: directory).check()
        let cache = try ChatCache(
            directory: URL(fileURLWithPath: directory),
            configuration: Configuration(maxMessagesPerChannel: maxMessages, logger: Output.quietLogger, encryption: encryption))
        var dropped = [Dropped]()
        // A kind with no records and no "empty" line is not touched: no empty file appears.
        if !plan.channels.isEmpty || plan.emptyFiles.contains(.channels) { try cache.channels.blocking.save(plan.channels) }
        for (url, messages) in plan.messagesByChannel {
            let result = try cache.messages.blocking.save(messages)
            if result.recordsDropped > 0 { dropped.append(Dropped(channelURL: url, dropped: result.recordsDropped)) }
        }
        for case .messages(let url) in plan.emptyFiles where plan.messages[Array(url.utf8)] == nil {
            // Cached as empty only where nothing is cached yet: import never takes messages away.
            if try cache.messages.blocking.loadIfCached(in: url) == nil { try cache.messages.blocking.replace([], in: url) }
        }
        if !plan.users.isEmpty || plan.emptyFiles.contains(.users) { try cache.users.blocking.save(plan.users) }
        let report = Report(
            channels: plan.distinctChannels, messages: plan.distinctMessages, users: plan.distinctUsers,
            emptyFiles: plan.emptyFiles.count, recordsLeftOut: plan.leftOut.byCachingRules, leftOut: plan.leftOut,
            maxMessages: maxMessages, messagesDropped: dropped.reduce(0) { $0 + $1.dropped }, droppedByChannel: dropped)
        for note in Self.notes(report) { FileHandle.standardError.write(Data((note + "\n").utf8)) }
        if json { return try Output.json(report) }
        let empty = report.emptyFiles == 0 ? "" : " (and \(plural(report.emptyFiles, "empty file")))"
        print("Imported \(plural(report.channels, "channel")), \(plural(report.messages, "message")) and "
            + "\(plural(report.users, "user"))\(empty) into \(directory).")
    }

    /// One sentence per reason something was not saved, for standard error.
    static func notes(_ report: Report) -> [String] {
        let left = report.leftOut
        var notes = [String]()
        if left.unsentMessages > 0 {
            notes.append("Left out \(plural(left.unsentMessages, "unsent message")) (id 0): unsent messages are never cached.")
        }
        if left.openChannels > 0 {
            notes.append("Left out \(plural(left.openChannels, "open channel")): only group channels are cached.")
        }
        if left.openChannelMessages > 0 {
            notes.append("Left out \(plural(left.openChannelMessages, "message")) of open channels: only group channels' messages are cached.")
        }
        if left.replacedByLaterLines > 0 {
            notes.append("Left out \(plural(left.replacedByLaterLines, "line")) that a later line with the same id replaces.")
        }
        for channel in report.droppedByChannel {
            notes.append(
                "Dropped \(plural(channel.dropped, "older message")) of channel '\(channel.channelURL)': a channel keeps its "
                    + "newest \(report.maxMessages); import with --max-messages \(report.maxMessages + channel.dropped) to keep them all.")
        }
        return notes
    }
}

/// "1 message", "2 messages": a count and its noun.
func plural(_ number: Int, _ noun: String) -> String { "\(number) \(noun)\(number == 1 ? "" : "s")" }
