/// Observing the cached channel list.
extension ChannelStore {
    /// The cached group channels now, then again after each change, for as
    /// long as the loop runs (see `MessageStore.observe(in:)`, which this
    /// mirrors: any number of loops, each change once, in order; changes
    /// through any ``ChatCache`` on the folder in this process).
    ///
    /// ```swift
    /// for try await channels in cache.channels.observe() {
    ///     print(channels.map(\.name))   // redraw the list
    /// }
    /// ```
    /// - Parameter order: As `load(order:)`; newest first by default.
    /// - Returns: The values, as `load(order:)` returns them; the stream
    ///   throws the error of a read that failed (then it ends).
    public func observe(order: Order = .newestFirst) -> AsyncThrowingStream<[Channel], any Error> {
        StoreObservation.values(of: layout.channelsFile.path, in: engine.hub) { () async throws(FlatCacheError) in
            try await load(order: order)
        }
    }
}
