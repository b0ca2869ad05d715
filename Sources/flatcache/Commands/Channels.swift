import ArgumentParser
import FlatCache

struct Channels: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the cached channels, newest last message first.",
        discussion: HelpText.paragraphs(
            """
            Prints one row per channel: its URL, name, the time of its last message (UTC) and how \
            many of its messages are cached. --json prints an array of objects with channelURL, \
            name, lastMessageAt (milliseconds since 1970) and cachedMessages.
            """,
            HelpText.otherRecordTypes,
            HelpText.keyRequired,
            HelpText.readsOnly,
            HelpText.readExitStatus,
            HelpText.examples(
                "flatcache channels ~/.cache/flatcache-demo",
                "flatcache channels ~/.cache/flatcache-demo --json")))

    @OptionGroup var options: CacheOptions

    struct Row: Codable {
        var channelURL: String
        var name: String
        var lastMessageAt: Int64
        var cachedMessages: Int
    }

    func run() throws {
        try options.read({ cache in
            let rows = try cache.channels.blocking.load().map { channel in
                Row(channelURL: channel.channelURL, name: channel.name, lastMessageAt: channel.lastMessageAt,
                    cachedMessages: try cache.messages.blocking.load(in: channel.channelURL).count)
            }
            if options.json { return try Output.json(rows) }
            Output.table([["URL", "NAME", "LAST MESSAGE", "CACHED"]]
                + rows.map { [$0.channelURL, $0.name, Output.time($0.lastMessageAt), "\($0.cachedMessages)"] })
        }, otherTypes: { summary in
            try Output.opaque(summary.files.filter { $0.role == .channels }, of: summary, json: options.json)
        })
    }
}
