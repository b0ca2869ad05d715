import ArgumentParser
import FlatCache
import FlatCacheMatrix
import Foundation

/// `flatcache-matrix search QUERY`: the cached messages that hold the query's words, in every room, offline.
struct SearchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "search",
        abstract: "Find cached messages by their words, in every room, best match first (offline).",
        discussion: """
            Each word must be in the message, in any case, with or without accents; the last word \
            may be the start of one ("tra" finds "trail"); words in double quotes are a phrase. An \
            edited message is found by its newest text only, and a redacted one never. Prints one \
            hit per line: time, room, sender and text, the matched words in [brackets] (in bold on \
            a terminal, unless NO_COLOR is set), then how many were shown and whether more match.
            """)

    @Argument(help: "What to search for: words, or a \"phrase\" in double quotes.")
    var query: String

    @Option(name: .customLong("room"), help: "Only this room: its id (!...:server) or its cached name; repeat it for several.")
    var rooms: [String] = []

    @Option(name: .customLong("sender"), help: "Only messages this user sent (@name:server); repeat it for several.")
    var senders: [String] = []

    @Option(name: .long, help: "How many hits to show, at least 1.")
    var limit = 20

    @Flag(name: .long, help: "Newest message first, instead of best match first.")
    var newestFirst = false

    @OptionGroup var folder: FolderOption

    func validate() throws {
        guard !query.allSatisfy(\.isWhitespace) else { throw ValidationError("give words to search for.") }
        guard limit >= 1 else { throw ValidationError("--limit must be 1 or more, not \(limit).") }
    }

    func run() async throws {
        let cache = try folder.openForReading()
        let cachedRooms = try await cache.channels.load()
        let roomIDs = try rooms.map { room in
            guard let found = cachedRooms.first(where: { $0.roomID == room }) ?? cachedRooms.first(where: { $0.name == room }) else {
                throw ToolError("no cached room has the id or name '\(room)'; 'flatcache-matrix rooms' lists them.")
            }
            return found.roomID
        }
        let filter = SearchFilter(
            channelURLs: roomIDs.isEmpty ? nil : Set(roomIDs), senderIDs: senders.isEmpty ? nil : Set(senders))
        try await cache.search.prepare()
        let page = try await cache.search.messages(
            matching: query, filter: filter, order: newestFirst ? .newestFirst : .relevance, limit: limit)
        let names = try await cache.users.load().reduce(into: [String: String]()) { $0[$1.userID] = $1.nickname }
        let roomNames = Dictionary(cachedRooms.map { ($0.roomID, $0.name) }, uniquingKeysWith: { first, _ in first })
        let bold = isatty(STDOUT_FILENO) == 1 && ProcessInfo.processInfo.environment["NO_COLOR"] == nil
        for hit in page.hits {
            let message = hit.message
            let edited = message.isEdited ? " (edited)" : ""
            print("\(Format.time(message.createdAt))  \(roomNames[hit.channelURL] ?? hit.channelURL)  "
                + "\(names[message.sender] ?? message.sender): \(Self.marked(hit, bold: bold))\(edited)")
        }
        let count = "\(page.hits.count) hit\(page.hits.count == 1 ? "" : "s")"
        switch (page.hits.isEmpty, page.next != nil) {
        case (true, _): print("no cached message matches \"\(query)\"")
        case (false, false): print("\(count), no more")
        case (false, true): print("\(count) shown; more match (raise --limit to see them)")
        }
    }

    /// The hit's text on one line, its matched words in bold or in brackets.
    static func marked(_ hit: SearchHit<MatrixMessage>, bold: Bool) -> String {
        let (open, close) = bold ? ("\u{1B}[1m", "\u{1B}[0m") : ("[", "]")
        return String(hit.markedText(open: open, close: close).map { $0.isNewline ? " " : $0 })
    }
}
