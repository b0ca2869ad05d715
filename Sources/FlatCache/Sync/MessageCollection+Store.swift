/// Following the channel in the store: messages saved, changed or removed
/// there by other code (another screen, a push handler, another
/// ``ChatCache`` on the folder) reach the view as ordinary events.
extension MessageCollection {
    /// Starts following the channel's changes in the store, told by the
    /// folder's change hub as `MessageStore.observe(in:)` is.
    ///
    /// Each change takes a turn like any call and compares the store with
    /// what the view shows then: the collection's own writes are shown by the
    /// time their turn ends, so they find nothing left to tell (no event twice).
    func followStore() {
        // The URL was checked when the collection was made: this file always exists as a name.
        guard let path = try? store.layout.messagesFile(forChannel: channelURL).path else { return }
        let hub = store.engine.hub
        storeChanges = Task { [weak self] in
            await hub.follow(path) { await self?.catchUpWithStore() }
        }
    }

    /// Shows what changed in the store since the view last matched it.
    private func catchUpWithStore() async {
        do {
            try await exclusively { () async throws(FlatCacheError) in
                // Read in the turn: a value read before a call of ours wrote would be stale.
                guard let stored = try await store.loadIfCached(in: channelURL) else { return }
                follow(stored)
            }
        } catch .collectionDisposed {
            return
        } catch {
            emit(.failed(error))
        }
    }

    /// Tells the view what `stored` (the channel's cached messages, oldest
    /// first) changes of what it shows: messages shown that the store no
    /// longer holds are ``MessageCollectionEvent/deleted(_:)`` (but not ones
    /// older than its oldest when it holds its ``Configuration/maxMessagesPerChannel``:
    /// retention dropped those, the server still has them), ones it holds with other bytes ``MessageCollectionEvent/updated(_:)``,
    /// and ones new to the view within what it spans (up to the newest when
    /// the view reaches the newest) ``MessageCollectionEvent/added(_:)``.
    func follow(_ stored: [Message]) {
        var byID = [Message.MessageID: Message](minimumCapacity: stored.count)
        for message in stored { byID[message.messageID] = message }
        // A channel at its limit dropped its oldest by retention: shown ones older than what it holds are not gone.
        let retainedFrom = stored.count >= store.maxPerChannel ? stored.first : nil
        let gone = messages.filter { message in
            byID[message.messageID] == nil && retainedFrom.map { !CanonicalOrder.precedes(message, $0) } ?? true
        }.map(\.messageID)
        if !gone.isEmpty {
            removeShown(Set(gone))
            emit(.deleted(gone))
        }
        let changed = messages.compactMap { shown in
            byID[shown.messageID].flatMap { StoreObservation.sameBytes($0, shown) ? nil : $0 }
        }
        if !changed.isEmpty {
            replaceShown(changed)
            emit(.updated(changed))
        }
        let reachesNewest = !hasNext && !hugeGapFound
        let oldest = messages.first
        let newest = messages.last
        let candidates = stored.filter { message in
            guard !shown.contains(message.messageID) else { return false }
            guard let oldest, let newest else { return reachesNewest }
            return !CanonicalOrder.precedes(message, oldest) && (reachesNewest || CanonicalOrder.precedes(message, newest))
        }
        // Nothing shown yet: the newest page of them, as start() would show.
        let added = oldest == nil ? Array(candidates.suffix(pageSize)) : candidates
        if !added.isEmpty {
            show(messages + added)
            emit(.added(added))
        }
    }
}
