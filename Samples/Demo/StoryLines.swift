import FlatCache

/// The story's lines: a heading per step, then short labelled lines, such
/// as `  event  added 12 messages (#61…#72)`. Plain text, no colours.
enum StoryLines {
    /// Prints a step's heading, after a blank line.
    static func heading(_ number: Int, _ title: String) {
        print("\n\(number) · \(title)")
    }

    /// Prints `text` under a label (`event`, `call`, `server`, ...), the labels in one column.
    static func say(_ label: String, _ text: String) {
        print("  " + label + String(repeating: " ", count: max(1, 7 - label.count)) + text)
    }

    // MARK: - Events

    /// A message collection's event: its case's name and a line.
    @Sendable static func describe(_ event: MessageCollectionEvent<ChatMessage>) -> (name: String, text: String) {
        switch event {
        case .cachedPage(let page): ("cachedPage", "cachedPage \(messages(page))")
        case .replaced(let page): ("replaced", "replaced \(messages(page))")
        case .added(let added): ("added", "added \(messages(added))")
        case .prepended(let page): ("prepended", "prepended \(messages(page))")
        case .appended(let page): ("appended", "appended \(messages(page))")
        case .updated(let updated):
            ("updated", "updated \(count(updated.count, "message")) (\(list(updated.map { "#\($0.messageID) \"\($0.text)\"" })))")
        case .deleted(let ids): ("deleted", "deleted \(count(ids.count, "message")) (\(list(ids.map { "#\($0)" })))")
        case .channelUpdated: ("channelUpdated", "channelUpdated: reload the channel")
        case .channelDeleted: ("channelDeleted", "channelDeleted: its messages are gone")
        case .hugeGap: ("hugeGap", "hugeGap: too many messages missing; the newest page replaces the view and the cache")
        case .failed(let error): ("failed", "failed: \(error)")
        case .outboxAdded(let entry): ("outboxAdded", "outboxAdded \(outboxEntry(entry))")
        case .outboxChanged(let entry): ("outboxChanged", "outboxChanged \(outboxEntry(entry))")
        case .outboxConfirmed(let entry, let copy):
            ("outboxConfirmed", "outboxConfirmed \(entry.requestID) as #\(copy.messageID)")
        case .outboxCancelled(let entry): ("outboxCancelled", "outboxCancelled \(entry.requestID)")
        }
    }

    /// An outbox entry: its request id, text and state.
    static func outboxEntry(_ entry: OutboxEntry<ChatMessage>) -> String {
        let state =
            switch entry.state {
            case .pending: entry.lastFailure.map { "pending (\($0))" } ?? "pending"
            case .sending: "sending"
            case .failed(let reason, let attempts): "failed after \(count(attempts, "attempt")): \(reason)"
            case .sent(let id): "sent as #\(id)"
            }
        return "\(entry.requestID) \"\(entry.message.text)\" \(state)"
    }

    /// A channel list's event: its case's name and a line.
    @Sendable static func describe(_ event: ChannelListEvent<ChatChannel>) -> (name: String, text: String) {
        switch event {
        case .cachedList(let list): ("cachedList", "cachedList \(channels(list))")
        case .replaced(let list): ("replaced", "replaced \(channels(list))")
        case .added(let channel): ("added", "channel added: \(channel.name)")
        case .updated(let channel): ("updated", "channel updated: \(channel.name)")
        case .moved(let channel):
            ("moved", "channel moved: \(channel.name), last message \(channel.lastMessage.map { "#\($0.messageID)" } ?? "none")")
        case .removed(let url): ("removed", "channel removed: \(url)")
        case .failed(let error): ("failed", "failed: \(error)")
        }
    }

    /// A user directory's event: its case's name and a line.
    @Sendable static func describe(_ event: UserDirectory<ChatUser>.Event) -> (name: String, text: String) {
        switch event {
        case .fetched(let users): ("fetched", "fetched \(count(users.count, "user")) (\(names(users)))")
        case .changed(let users):
            ("changed", "changed \(count(users.count, "user")) (\(names(users))), refreshed in the background")
        case .failed(let error): ("failed", "failed: \(error)")
        }
    }

    // MARK: - Pieces

    /// `30 messages (#31…#60)`: how many, and the first and last ids.
    static func messages(_ messages: [ChatMessage]) -> String {
        guard let first = messages.first, let last = messages.last else { return "0 messages" }
        let ids = first.messageID == last.messageID ? "#\(first.messageID)" : "#\(first.messageID)…#\(last.messageID)"
        return "\(count(messages.count, "message")) (\(ids))"
    }

    /// `3 channels (General, Hiking, Books)`.
    static func channels(_ channels: [ChatChannel]) -> String {
        channels.isEmpty ? "0 channels" : "\(count(channels.count, "channel")) (\(channels.map(\.name).joined(separator: ", ")))"
    }

    /// `Chen, Dara, Eli`: the users' nicknames.
    static func names(_ users: [ChatUser]) -> String {
        list(users.map(\.nickname))
    }

    /// `a, b, c`.
    static func list(_ items: [String]) -> String {
        items.joined(separator: ", ")
    }

    /// `1 message`, `12 messages`.
    static func count(_ number: Int, _ noun: String) -> String {
        "\(number) \(noun)\(number == 1 ? "" : "s")"
    }
}
