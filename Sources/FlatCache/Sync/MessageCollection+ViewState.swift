extension MessageCollection {
    /// What the view shows, read in one turn of the actor so that its parts agree
    /// (what ``MessageCollectionModel`` copies to the main actor).
    struct ViewState: Sendable {
        var messages: [Message]
        var pending: [OutboxEntry<Message>]
        var hasPrevious: Bool
        var hasNext: Bool
    }

    /// The current ``ViewState``.
    var viewState: ViewState {
        ViewState(messages: messages, pending: pending, hasPrevious: hasPrevious, hasNext: hasNext)
    }
}
