import ArgumentParser
import FlatCache
import Foundation

struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the whole cache as JSON Lines: one object per line, with a \"kind\" of channel, message, user or empty.",
        discussion: HelpText.paragraphs(
            """
            Channels first (newest first), then every channel's messages (oldest first), then \
            users. A data file that exists and holds no records (an empty channel list, a channel \
            cached as empty, an empty users file) is one line of kind "empty", so a channel cached \
            as empty stays apart from one never cached. An empty message file of a channel missing \
            from the channel list cannot be exported (its URL is unknown); it is named on standard \
            error. docs/format.md describes the lines ("The export format").
            """,
            """
            `flatcache import` reads it back: export followed by import into an empty folder, with \
            the --max-messages the cache was written with, reproduces the cache byte for byte. It \
            takes no --json: its output is JSON already. A folder written with other record types \
            cannot be exported: that is an error.
            """,
            HelpText.keyRequired,
            HelpText.readsOnly,
            HelpText.readExitStatus,
            HelpText.examples(
                "flatcache export ~/.cache/flatcache-demo > cache.jsonl",
                "flatcache export Chat.cache --key-file chat.key > chat.jsonl")))

    @Argument(help: "The cache folder.")
    var directory: String

    @OptionGroup var key: KeyFileOption

    func run() throws {
        let options = CacheOptions(directory: directory, key: key)
        let encryption = try key.encryption()
        try options.read({ cache in
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            var out = Data()
            func line(_ exported: ExportLine) throws {
                out.append(try encoder.encode(exported))
                out.append(UInt8(ascii: "\n"))
            }
            let channels = try cache.channels.blocking.load()
            let users = try cache.users.blocking.load()
            // Loads read an empty file and a missing one alike; the summary tells them apart.
            var empty = Set(try CacheFolderSummary.read(directory: options.url).files
                .filter { $0.records == 0 && $0.problem == nil }.map(\.path))
            for channel in channels { try line(.channel(channel)) }
            if channels.isEmpty && empty.contains("channels.lines") { try line(.empty(.channels)) }
            for message in try cache.messages.blocking.loadAll() { try line(.message(message)) }
            for channel in channels {
                let path = try CacheFolderSummary.messagesFilePath(forChannel: channel.channelURL, encryption: encryption)
                if empty.remove(path) != nil { try line(.empty(.messages(channelURL: channel.channelURL))) }
            }
            for user in users { try line(.user(user)) }
            if users.isEmpty && empty.contains("users.lines") { try line(.empty(.users)) }
            FileHandle.standardOutput.write(out)
            for path in empty.filter({ $0.hasPrefix("messages/") }).sorted() {
                Output.error("Left out \(path): an empty message file of a channel not in the channel list, so its URL is unknown.")
            }
        }, otherTypes: { summary in
            throw ToolError("\(directory) holds \(summary.recordTypes.map { "\($0)" } ?? "unknown record types"); export reads the built-in record types only.")
        })
    }
}

extension CacheOptions {
    init(directory: String, key: KeyFileOption) {
        self.init()
        self.directory = directory
        self.key = key
    }
}
