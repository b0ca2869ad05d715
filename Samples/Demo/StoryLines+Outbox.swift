import FlatCache

/// The outbox story's lines.
extension StoryLines {
    /// An outbox event: its name (its case, or its new state, then the
    /// request id, such as `failed ana-5`) and a line.
    @Sendable static func describe(_ event: OutboxEvent<ChatMessage>) -> (name: String, text: String) {
        switch event {
        case .queued(let entry): ("queued \(entry.requestID)", "queued \(entry.requestID) \(quoted(entry.message))")
        case .changed(let entry):
            switch entry.state {
            case .pending:
                ("pending \(entry.requestID)", "pending \(entry.requestID) again"
                    + (entry.lastFailure.map { " after attempt \(entry.attempts) failed (\($0))" } ?? ""))
            case .sending: ("sending \(entry.requestID)", "sending \(entry.requestID), attempt \(entry.attempts)")
            case .failed(let reason, let attempts):
                ("failed \(entry.requestID)", "failed \(entry.requestID) for good after \(count(attempts, "attempt")): \(reason)")
            case .sent(let serverID): ("sent \(entry.requestID)", "sent \(entry.requestID) as #\(serverID)")
            }
        case .confirmed(let entry, let message):
            ("confirmed \(entry.requestID)", "confirmed \(entry.requestID): the server's #\(message.messageID) \(quoted(message))")
        case .cancelled(let entry): ("cancelled \(entry.requestID)", "cancelled \(entry.requestID)")
        }
    }

    /// `ana-1 pending "Landed, on the train now"`: an outbox entry as a list shows it.
    static func entry(_ entry: OutboxEntry<ChatMessage>) -> String {
        let state = switch entry.state {
        case .pending: "pending"
        case .sending: "sending"
        case .failed(let reason, let attempts): "failed (\(reason), \(count(attempts, "attempt")))"
        case .sent(let serverID): "sent as #\(serverID)"
        }
        return "\(entry.requestID) \(state) \(quoted(entry.message))"
    }

    /// `#3 "Who has the map?"`: a message the server holds.
    static func served(_ message: ChatMessage) -> String {
        "#\(message.messageID) \(quoted(message))"
    }

    /// The message's text in quotes.
    static func quoted(_ message: ChatMessage) -> String {
        "\"\(message.text)\""
    }
}
