/// Following the list in the store: channels saved, changed or removed
/// there by other code reach the list as ordinary events.
extension ChannelListCollection {
    /// Starts following the channel list's changes in the store, told by the
    /// folder's change hub as `ChannelStore.observe(order:)` is.
    ///
    /// Each change takes a turn like any call and compares the store with
    /// the list shown then, so the collection's own writes tell nothing twice.
    func followStore() {
        let path = store.layout.channelsFile.path
        let hub = store.engine.hub
        storeChanges = Task { [weak self] in
            await hub.follow(path) { await self?.catchUpWithStore() }
        }
    }

    /// Shows what changed in the store since the list last matched it.
    private func catchUpWithStore() async {
        do {
            try await exclusively { () async throws(FlatCacheError) in
                // Read in the turn: a value read before a call of ours wrote would be stale.
                follow(try await store.load())
            }
        } catch .collectionDisposed {
            return
        } catch {
            emit(.failed(error))
        }
    }

    /// Makes `stored` (the cached list, newest first) the list shown, telling
    /// each difference: ``ChannelListEvent/removed(channelURL:)``,
    /// ``ChannelListEvent/added(_:)``, ``ChannelListEvent/moved(_:)`` (a new
    /// last message time) or ``ChannelListEvent/updated(_:)`` (other bytes).
    func follow(_ stored: [Channel]) {
        var byKey = [RecordKey: Channel](minimumCapacity: stored.count)
        for channel in stored { byKey[RecordKey(channel.channelURL)] = channel }
        let same = StoreObservation.sameness(of: Channel.self)
        var events = [ChannelListEvent<Channel>]()
        var shownKeys = Set<RecordKey>()
        for channel in channels {
            let key = RecordKey(channel.channelURL)
            shownKeys.insert(key)
            guard let now = byKey[key] else {
                events.append(.removed(channelURL: channel.channelURL))
                continue
            }
            if now.lastMessageAt != channel.lastMessageAt {
                events.append(.moved(now))
            } else if !same(now, channel) {
                events.append(.updated(now))
            }
        }
        for channel in stored where !shownKeys.contains(RecordKey(channel.channelURL)) { events.append(.added(channel)) }
        guard !events.isEmpty else { return }
        channels = stored
        for event in events { emit(event) }
    }
}
