import ArgumentParser
import FlatCache
import Foundation

/// `flatcache outbox`: the messages queued to send, as `outbox.lines` holds them.
struct OutboxList: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "outbox",
        abstract: "List the messages queued to send, in queue order per channel.",
        discussion: HelpText.paragraphs(
            """
            Lists the messages the outbox holds (outbox.lines: queued with cache.outbox.send, not \
            yet sent or cancelled), channel by channel in the order they were queued, channels in \
            the order of their first entry. Each row: channel, request id, state (pending, sending \
            or failed), attempts, when it was queued (UTC), the reason (why the server refused it, \
            or the last failure of a pending one; "-" for none) and its text. A folder with no \
            outbox file prints "No message is queued to send." --json prints an array with one object per \
            entry: requestID, channelURL, state, attempts, reason (left out when there is none), \
            queuedAt (milliseconds since 1970) and text. `flatcache info` counts them.
            """,
            """
            A folder written with other record types cannot be decoded by the tool: it shows the \
            outbox file's record types, lines, bytes and when it was last saved instead.
            """,
            HelpText.keyRequired,
            HelpText.readsOnly,
            HelpText.readExitStatus,
            HelpText.examples(
                "flatcache outbox ~/.cache/flatcache-demo",
                "flatcache outbox ~/.cache/flatcache-demo --json")))

    @OptionGroup var options: CacheOptions

    /// One entry, as `--json` prints it.
    struct Row: Codable {
        var requestID: String
        var channelURL: String
        /// `pending`, `sending` or `failed`.
        var state: String
        var attempts: Int
        /// Why it failed, or the last failure of a pending entry; left out when there is none.
        var reason: String?
        var queuedAt: Int64
        var text: String
    }

    func run() async throws {
        try await options.read({ cache in
            let rows = Self.grouped(try await cache.outbox.entries()).map(Self.row)
            if options.json { return try Output.json(rows) }
            guard !rows.isEmpty else {
                // A damaged file reads as no entries: the report on standard error says so, not this line.
                if !FileManager.default.fileExists(atPath: options.url.appendingPathComponent("outbox.lines").path) {
                    print("No message is queued to send.")
                }
                return
            }
            Output.table([["CHANNEL", "REQUEST ID", "STATE", "ATTEMPTS", "QUEUED", "REASON", "TEXT"]] + rows.map {
                [$0.channelURL, $0.requestID, $0.state, "\($0.attempts)", Output.time($0.queuedAt), $0.reason ?? "-", $0.text]
            })
        }, otherTypes: { summary in
            try Output.opaque(summary.files.filter { $0.role == .outbox }, of: summary, json: options.json)
        })
    }

    /// Queue order within each channel, channels in the order of their first entry.
    static func grouped(_ entries: [OutboxEntry<ChatMessage>]) -> [OutboxEntry<ChatMessage>] {
        var channels = [String]()
        var byChannel = [String: [OutboxEntry<ChatMessage>]]()
        for entry in entries {
            if byChannel[entry.channelURL] == nil { channels.append(entry.channelURL) }
            byChannel[entry.channelURL, default: []].append(entry)
        }
        return channels.flatMap { byChannel[$0] ?? [] }
    }

    static func row(_ entry: OutboxEntry<ChatMessage>) -> Row {
        let (state, reason): (String, String?) =
            switch entry.state {
            case .pending: ("pending", entry.lastFailure)
            case .sending: ("sending", entry.lastFailure)
            case .failed(let reason, _): ("failed", reason)
            case .sent: ("sent", nil)
            }
        return Row(
            requestID: entry.requestID, channelURL: entry.channelURL, state: state, attempts: entry.attempts,
            reason: reason, queuedAt: entry.queuedAt, text: entry.message.text)
    }
}
