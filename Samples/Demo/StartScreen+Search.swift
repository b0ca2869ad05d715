import FlatCache
import Foundation

/// The start screen's last step: a search box over every cached message, offline.
extension StartScreen {
    /// What the demo types into the search box.
    static let searchQuery = "trail"

    /// Searches the cache for ``searchQuery`` and shows how many messages match and the best one,
    /// its matched words marked; says nothing when no message is cached.
    func showSearch(_ cache: ChatCache<ChatMessage, ChatChannel, ChatUser>) async throws {
        let started = Date()
        let ready = try await cache.search.prepare()
        guard ready.indexedMessages > 0 else { return }
        let page = try await cache.search.messages(matching: Self.searchQuery, limit: 100)
        let elapsed = Date().timeIntervalSince(started) * 1000
        let count = "\(page.hits.count)\(page.next == nil ? "" : "+") hit\(page.hits.count == 1 ? "" : "s")"
        print("\nSearch · \"\(Self.searchQuery)\" among \(ready.indexedMessages) cached messages in "
            + "\(String(format: "%.1f", elapsed)) ms: \(count)\(page.hits.isEmpty ? "" : ", the best:")")
        guard let best = page.hits.first else { return }
        let channel = try await cache.channels.channel(withURL: best.channelURL)?.name ?? best.channelURL
        let bold = isatty(STDOUT_FILENO) == 1 && ProcessInfo.processInfo.environment["NO_COLOR"] == nil
        print("  · \(channel)  \(Self.time(best.message.createdAt))  "
            + "\(best.message.sender?.nickname ?? "admin"): \(Self.marked(best, bold: bold))")
    }

    /// The hit's text on one line, its matched words in bold on a terminal, else in brackets.
    static func marked(_ hit: SearchHit<ChatMessage>, bold: Bool) -> String {
        let (open, close) = bold ? ("\u{1B}[1m", "\u{1B}[0m") : ("[", "]")
        return String(hit.markedText(open: open, close: close).map { $0.isNewline ? " " : $0 })
    }
}
