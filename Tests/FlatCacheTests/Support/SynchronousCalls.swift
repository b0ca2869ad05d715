import FlatCache

/// The synchronous store calls under names an `async` test can reach: there,
/// `save` and `load` mean their `async` overloads.
extension MessageStore {
    /// The synchronous ``MessageStore/save(_:)-(Sequence<Message>)``: written before it returns.
    @discardableResult
    func saveNow(_ messages: some Sequence<Message>) throws -> SaveResult {
        try save(messages)
    }

    /// The synchronous ``MessageStore/load(in:)-(String)``.
    func loadNow(in channelURL: String) throws -> [Message] {
        try load(in: channelURL)
    }

    /// The synchronous ``MessageStore/loadIfCached(in:)-(String)``.
    func loadIfCachedNow(in channelURL: String) throws -> [Message]? {
        try loadIfCached(in: channelURL)
    }
}
