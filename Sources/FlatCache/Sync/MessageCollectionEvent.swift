/// What a ``MessageCollection`` tells the chat view, in order, on its
/// ``MessageCollection/events`` stream. Each event changes the list the view
/// shows (``MessageCollection/messages``) the same way: apply them in order
/// and the view matches it.
public enum MessageCollectionEvent<Message: MessageRecord>: Sendable {
    /// The cached page at the starting point, delivered at once by
    /// ``MessageCollection/start()``: the view shows exactly these, oldest first.
    case cachedPage([Message])
    /// The server's page at the starting point replaces everything shown: the
    /// view shows exactly these, oldest first.
    case replaced([Message])
    /// Messages new to the view (a gap filled, a live message, a message
    /// other code saved to the store), oldest first;
    /// each goes in its place by creation time, then id.
    case added([Message])
    /// The page ``MessageCollection/loadPrevious()`` added, oldest first: all
    /// older than every message shown, they go before them (the messages it
    /// returns; a message of the page that sorts among those shown, one not
    /// shown that shares a shown one's millisecond, comes just before as
    /// ``added(_:)``; none when it returns `[]`).
    case prepended([Message])
    /// The page ``MessageCollection/loadNext()`` added, oldest first: all
    /// newer than every message shown, they go after them (the messages it
    /// returns; a message of the page that sorts among those shown, one not
    /// shown that shares a shown one's millisecond, comes just before as
    /// ``added(_:)``; none when it returns `[]`).
    case appended([Message])
    /// Messages shown that changed (an edit, live or saved to the store by
    /// other code); each replaces the one with its id.
    case updated([Message])
    /// Messages shown that were deleted (live, by a change log, or removed
    /// from the store by other code).
    case deleted([Message.MessageID])
    /// The channel's own data changed: reload it from the channel list.
    case channelUpdated
    /// The channel was deleted or left: its cached messages are gone; dispose the collection.
    case channelDeleted
    /// The server has more missing messages after the newest shown than the
    /// collection's ``MessageCollection/hugeGapThreshold``: the collection did
    /// not fetch them. A ``replaced(_:)`` with the server's newest page follows
    /// (unless the source fails: then ``MessageCollection/sync()`` throws and
    /// the next sync reloads), and that page becomes the channel's whole cache:
    /// the older cached messages are dropped, as they are not continuous with it,
    /// and paging back fetches them from the server again.
    case hugeGap
    /// Work the collection did on its own (a live event) failed; what it
    /// shows and caches stays true, and ``MessageCollection/sync()`` catches up.
    case failed(FlatCacheError)
    /// A message of the channel's ``Outbox`` entries joins
    /// ``MessageCollection/pending`` at its end: queued now, or waiting when the collection started.
    case outboxAdded(OutboxEntry<Message>)
    /// An entry of ``MessageCollection/pending`` changed (being sent, failed,
    /// pending again, edited): it replaces the one with its request id.
    case outboxChanged(OutboxEntry<Message>)
    /// An entry of ``MessageCollection/pending`` reached the server: it leaves
    /// ``MessageCollection/pending``; the server's copy is among ``MessageCollection/messages``
    /// when the view reaches the newest (told as ``added(_:)``, just before or just after).
    case outboxConfirmed(OutboxEntry<Message>, Message)
    /// An entry of ``MessageCollection/pending`` was cancelled: it leaves it.
    case outboxCancelled(OutboxEntry<Message>)
}

extension MessageCollectionEvent {
    /// The messages the event puts into the view (shown or paged), for
    /// matching them to ``Outbox`` entries.
    var messagesShown: [Message] {
        switch self {
        case .cachedPage(let list), .replaced(let list), .added(let list), .prepended(let list), .appended(let list),
            .updated(let list):
            list
        default:
            []
        }
    }
}
