import FlatCache

/// The synchronous store calls under names an `async` test can reach: there,
/// `save` and `load` mean their `async` overloads.
extension MessageStore {
    /// The synchronous ``MessageStore/save(_:)-(Sequence<Message>)``: written before it returns.
    @discardableResult
    func saveNow(_ messages: some Sequence<Message>) throws -> SaveResult {
        try blocking.save(messages)
    }

    /// The synchronous ``MessageStore/replace(_:in:)-(Sequence<Message>,String)``: written before it returns.
    @discardableResult
    func replaceNow(_ messages: some Sequence<Message>, in channelURL: String) throws -> SaveResult {
        try blocking.replace(messages, in: channelURL)
    }

    /// The synchronous ``MessageStore/load(in:)-(String)``.
    func loadNow(in channelURL: String) throws -> [Message] {
        try blocking.load(in: channelURL)
    }

    /// The synchronous ``MessageStore/loadIfCached(in:)-(String)``.
    func loadIfCachedNow(in channelURL: String) throws -> [Message]? {
        try blocking.loadIfCached(in: channelURL)
    }
}

extension UserStore {
    /// The synchronous ``UserStore/save(_:)-(Sequence<User>)``.
    @discardableResult
    func saveNow(_ users: some Sequence<User>) throws -> SaveResult {
        try blocking.save(users)
    }

    /// The synchronous ``UserStore/load()-()``.
    func loadNow() throws -> [User] {
        try blocking.load()
    }
}

extension ChannelStore {
    /// The synchronous ``ChannelStore/replace(with:)-(Sequence<Channel>)``.
    @discardableResult
    func replaceNow(with channels: some Sequence<Channel>) throws -> SaveResult {
        try blocking.replace(with: channels)
    }
}
