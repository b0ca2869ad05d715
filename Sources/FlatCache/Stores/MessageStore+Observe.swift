/// Observing a channel's cached messages.
extension MessageStore {
    /// The channel's cached messages now, then again after each change, for
    /// as long as the loop runs: GRDB's `ValueObservation` model.
    ///
    /// ```swift
    /// for try await messages in cache.messages.observe(in: channelURL) {
    ///     print(messages.count)   // redraw
    /// }
    /// ```
    ///
    /// Any number of loops may observe one channel; each gets every change
    /// once, in order. A change is a save, replace, change log or removal
    /// through any store of any ``ChatCache`` open on the folder in this
    /// process, `async` or `.blocking`: one made through this cache shows at
    /// once (before write-behind writes it), one made through another
    /// instance once that instance wrote it to disk. Changes that come
    /// quickly one after another may show as one value (the latest); a
    /// value equal to the one before is not delivered again. Another
    /// process's writes show with the next change made in this process.
    ///
    /// The loop ends when its task is cancelled or it breaks; then the
    /// observation stops. Values are read as `load(in:)` reads them (the
    /// store's ``tier``, never blocking a cooperative-pool thread).
    /// - Parameter channelURL: The channel.
    /// - Returns: The values, oldest message first, as `load(in:)` returns them.
    ///   The stream throws ``FlatCacheError/emptyChannelURL`` at once for an
    ///   empty URL, or the error of a read that failed (then it ends).
    public func observe(in channelURL: String) -> AsyncThrowingStream<[Message], any Error> {
        let file: RecordFile
        do {
            file = try layout.messagesFile(forChannel: channelURL)
        } catch {
            return StoreObservation.failing(error)
        }
        return StoreObservation.values(of: file.path, in: engine.hub) { () async throws(FlatCacheError) in
            try await load(in: channelURL)
        }
    }
}
