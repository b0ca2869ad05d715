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
    /// longer holds are ``MessageCollectionEvent/deleted(_:)``, but not ones
    /// retention dropped (the server still has them): those older than what
    /// the store held at the last look, or than what it holds now when at its
    /// ``Configuration/maxMessagesPerChannel``. Ones it holds with
    /// other bytes ``MessageCollectionEvent/updated(_:)``, and ones new to the
    /// view within what it spans (up to the newest when the view reaches the
    /// newest) ``MessageCollectionEvent/added(_:)``.
    ///
    /// Both lists are in the channel's order (time, then id), so one walk
    /// over them side by side finds every difference, without a dictionary:
    /// this runs after every change to the channel, the collection's own too.
    func follow(_ stored: [Message]) {
        let same = StoreObservation.sameness(of: Message.self)
        // Retention drops the oldest: shown ones older than what the store held, or holds at its limit, are not gone.
        let heldFrom = storeOldest
        let retainedFrom = stored.count >= store.maxPerChannel ? stored.first : nil
        storeOldest = stored.first
        func dropped(_ message: Message) -> Bool {
            heldFrom.map { CanonicalOrder.precedes(message, $0) } ?? false
                || retainedFrom.map { CanonicalOrder.precedes(message, $0) } ?? false
        }
        var (gone, changed, unshown) = ([Message](), [Message](), [Message]())
        var (shownIndex, storedIndex) = (0, 0)
        while shownIndex < messages.count || storedIndex < stored.count {
            if shownIndex < messages.count, storedIndex < stored.count,
                messages[shownIndex].messageID == stored[storedIndex].messageID
            {
                if !same(stored[storedIndex], messages[shownIndex]) { changed.append(stored[storedIndex]) }
                shownIndex += 1
                storedIndex += 1
            } else if storedIndex == stored.count
                || (shownIndex < messages.count && CanonicalOrder.precedes(messages[shownIndex], stored[storedIndex]))
            {
                let message = messages[shownIndex]
                if !dropped(message) { gone.append(message) }
                shownIndex += 1
            } else {
                unshown.append(stored[storedIndex])
                storedIndex += 1
            }
        }
        // A message whose time changed is in both lists, at two places: it moved, it is not gone.
        if !gone.isEmpty, !unshown.isEmpty {
            let moved = Set(unshown.map(\.messageID)).intersection(gone.map(\.messageID))
            gone.removeAll { moved.contains($0.messageID) }
            changed += unshown.filter { moved.contains($0.messageID) }
        }
        if !gone.isEmpty {
            let ids = gone.map(\.messageID)
            removeShown(Set(ids))
            emit(.deleted(ids))
        }
        if !changed.isEmpty {
            replaceShown(changed)
            emit(.updated(changed))
        }
        let reachesNewest = !hasNext && !hugeGapFound
        let oldest = messages.first
        let newest = messages.last
        let candidates = unshown.filter { message in
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
