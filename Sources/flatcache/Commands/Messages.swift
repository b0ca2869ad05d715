import ArgumentParser
import FlatCache

struct Messages: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List one channel's cached messages, oldest first.")

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
        let cache = try options.openExisting()
        let all = try cache.messages.load(in: channelURL)
        let listed = try cache.channels.channel(withURL: channelURL) != nil
        guard !all.isEmpty || listed else {
            throw ToolError("No channel '\(channelURL)' is cached in \(options.directory).")
        }
        let messages: [ChatMessage]
        if let before {
            messages = try cache.messages.load(in: channelURL, before: before, limit: limit ?? Int.max)
        } else if let after {
            messages = try cache.messages.load(in: channelURL, after: after, limit: limit ?? Int.max)
        } else {
            messages = Array(all.suffix(limit ?? Int.max))
        }
        if options.json { return try Output.json(messages) }
        Output.table(messages.map { [Output.time($0.createdAt), "\($0.messageID)", "\($0.sender?.nickname ?? "admin"):", $0.text] })
    }
}
