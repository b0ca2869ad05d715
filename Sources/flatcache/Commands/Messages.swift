import ArgumentParser
import FlatCache

struct Messages: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List one channel's cached messages, oldest first.",
        discussion: HelpText.paragraphs(
            """
            Prints one row per message: its time (UTC), message id, sender's nickname ("admin" for \
            none) and text. --before or --after (not both) keeps the messages created before or \
            after a time, and --limit the ones nearest it, or the newest without either. --json \
            prints the messages as an array of objects. A channel that is neither cached nor in \
            the channel list is an error: "No channel '<url>' is cached in <folder>."
            """,
            HelpText.otherRecordTypes,
            HelpText.keyRequired,
            HelpText.readsOnly,
            HelpText.readExitStatus,
            HelpText.examples(
                "flatcache messages Chat.cache sendbird_group_channel_tokyo --limit 5",
                "flatcache messages Chat.cache sendbird_group_channel_hiking --json",
                "flatcache messages Chat.cache <channel-url> --before 1764000000000 --limit 3")))

    @OptionGroup var options: CacheOptions

    @Argument(help: "The channel's URL.")
    var channelURL: String

    @Option(help: "Only messages created before this time (milliseconds since 1970).")
    var before: Int64?

    @Option(help: "Only messages created after this time (milliseconds since 1970).")
    var after: Int64?

    @Option(help: "At most this many: the ones nearest --before or --after, or the newest.")
    var limit: Int?

    func validate() throws {
        if before != nil && after != nil { throw ValidationError("Please give --before or --after, not both.") }
        if let limit, limit < 0 { throw ValidationError("Please give --limit a number of 0 or more.") }
        if channelURL.isEmpty { throw ValidationError("Please give a channel URL.") }
    }

    func run() throws {
        try options.read({ cache in
            guard let all = try cache.messages.blocking.loadIfCached(in: channelURL) ?? listedAsEmpty(in: cache) else {
                throw ToolError("No channel '\(channelURL)' is cached in \(options.directory).")
            }
            let messages: [ChatMessage]
            if let before {
                messages = try cache.messages.blocking.load(in: channelURL, before: before, limit: limit ?? Int.max)
            } else if let after {
                messages = try cache.messages.blocking.load(in: channelURL, after: after, limit: limit ?? Int.max)
            } else {
                messages = Array(all.suffix(limit ?? Int.max))
            }
            if options.json { return try Output.json(messages) }
            Output.table(messages.map { [Output.time($0.createdAt), "\($0.messageID)", "\($0.sender?.nickname ?? "admin"):", $0.text] })
        }, otherTypes: { summary in
            let path = try CacheFolderSummary.messagesFilePath(forChannel: channelURL)
            let files = summary.files.filter { $0.path == path }
            guard !files.isEmpty else { throw ToolError("No channel '\(channelURL)' is cached in \(options.directory).") }
            try Output.opaque(files, of: summary, json: options.json)
        })
    }

    /// `[]` for a listed channel whose messages are not cached (or were damaged), `nil` for an unknown channel.
    private func listedAsEmpty(in cache: Cache) throws -> [ChatMessage]? {
        try cache.channels.blocking.channel(withURL: channelURL) != nil ? [] : nil
    }
}
