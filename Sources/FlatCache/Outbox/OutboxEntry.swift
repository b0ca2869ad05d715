/// A message the user wrote, waiting in the ``Outbox`` to reach the server
/// (or refused by it), with the key it is sent under.
public struct OutboxEntry<Message: MessageRecord>: Sendable, Identifiable {
    /// Where an entry is on its way to the server.
    public enum State: Sendable {
        /// Waiting its turn (or a retry after a failure that retrying can help: see ``OutboxEntry/lastFailure``).
        case pending
        /// Handed to the ``MessageSender``; the answer has not come yet. After a
        /// restart an entry found sending is sent again under the same key, which
        /// the server answers with the message it made the first time.
        case sending
        /// Refused for good by the server (``SendFailure/refused(_:)``) after
        /// `attempts` sends: it stays until ``Outbox/retry(_:with:)`` or ``Outbox/cancel(_:)``.
        case failed(reason: String, attempts: Int)
        /// The server has it, under `serverID`: the entry has left the outbox.
        case sent(serverID: Message.MessageID)
    }

    /// The idempotency key the message is sent under; unique in the outbox.
    public let requestID: String
    /// The message as queued (or as last edited by ``Outbox/retry(_:with:)``).
    public internal(set) var message: Message
    /// When ``Outbox/send(_:requestID:)`` queued it, in milliseconds since 1970.
    public let queuedAt: Int64
    /// Where it is on its way.
    public internal(set) var state: State
    /// How many times it was handed to the sender.
    public internal(set) var attempts: Int
    /// Why the last send failed (``SendFailure/offline(_:)``, a rate limit, a
    /// temporary failure), for the user to see; `nil` when no send failed.
    public internal(set) var lastFailure: String?

    /// Its ``requestID``.
    public var id: String { requestID }
    /// The channel it goes to.
    public var channelURL: String { message.channelURL }

    /// The same entry holding `message`, another record type's (a migration).
    func converted<Other: MessageRecord>(to message: Other) -> OutboxEntry<Other> {
        let state: OutboxEntry<Other>.State =
            switch self.state {
            case .pending, .sent: .pending  // a sent entry is never carried over: it has left
            case .sending: .sending
            case .failed(let reason, let attempts): .failed(reason: reason, attempts: attempts)
            }
        return OutboxEntry<Other>(
            requestID: requestID, message: message, queuedAt: queuedAt, state: state, attempts: attempts,
            lastFailure: lastFailure)
    }

    /// Whether it is still in the outbox: pending, sending or failed.
    public var isWaiting: Bool {
        if case .sent = state { false } else { true }
    }

    /// Whether it was refused for good.
    public var isFailed: Bool {
        if case .failed = state { true } else { false }
    }
}

/// What changed in an ``Outbox``, as ``Outbox/events()`` tells it.
public enum OutboxEvent<Message: MessageRecord>: Sendable {
    /// A message was queued.
    case queued(OutboxEntry<Message>)
    /// An entry changed: being sent, a send failed (``OutboxEntry/lastFailure``,
    /// or ``OutboxEntry/State/failed(reason:attempts:)``), pending again after a retry, or edited.
    case changed(OutboxEntry<Message>)
    /// The server has the entry's message: this is the server's copy. The
    /// entry has left the outbox.
    case confirmed(OutboxEntry<Message>, Message)
    /// The entry was cancelled and has left the outbox.
    case cancelled(OutboxEntry<Message>)

    /// The entry the event is about.
    public var entry: OutboxEntry<Message> {
        switch self {
        case .queued(let entry), .changed(let entry), .confirmed(let entry, _), .cancelled(let entry): entry
        }
    }
}
