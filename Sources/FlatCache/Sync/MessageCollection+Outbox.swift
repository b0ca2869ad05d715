/// The channel's ``Outbox`` entries in a ``MessageCollection``: shown as
/// ``MessageCollection/pending`` until the server's copy arrives, by whichever
/// path comes first (the send's answer, a live event, a page), and then shown once.
extension MessageCollection {
    /// Shows the channel's waiting entries and starts following the outbox's
    /// changes (subscribed first: an entry queued meanwhile is in one or the other, once).
    func showOutbox() async throws(FlatCacheError) {
        guard let outbox else { return }
        let changes = outbox.events()
        let waiting = try await outbox.entries(in: channelURL)
        guard !isDisposed else { throw .collectionDisposed }
        for entry in waiting where !pending.contains(where: { $0.requestID == entry.requestID }) {
            pending.append(entry)
            emit(.outboxAdded(entry))
        }
        // A copy cached before its entry was confirmed (a crash in between) confirms it now.
        confirmEchoes(messages)
        outboxEvents = Task { [weak self] in
            for await change in changes {
                guard let self, !Task.isCancelled else { return }
                await self.handle(change)
            }
        }
    }

    /// Applies an outbox change to ``pending`` in the collection's turn, so it
    /// never interleaves with a page or a live event.
    private func handle(_ change: OutboxEvent<Message>) async {
        guard change.entry.channelURL == channelURL else { return }
        do {
            try await exclusively { () async throws(FlatCacheError) in apply(change) }
        } catch {
            return  // only a disposal ends a turn without running it
        }
    }

    private func apply(_ change: OutboxEvent<Message>) {
        let index = pending.firstIndex { $0.requestID == change.entry.requestID }
        switch change {
        case .queued(let entry):
            guard index == nil else { return }
            pending.append(entry)
            emit(.outboxAdded(entry))
        case .changed(let entry):
            // An entry already confirmed by its echo, or not this view's, stays out.
            guard let index else { return }
            pending[index] = entry
            emit(.outboxChanged(entry))
        case .confirmed(let entry, let copy):
            guard let index else { return }
            pending.remove(at: index)
            emit(.outboxConfirmed(entry, copy))
            // Shown where live messages are: when the view reaches the newest, with no hole before it.
            guard !hasNext, !hugeGapFound, !shown.contains(copy.messageID), copy.channelURL == channelURL else { return }
            show(messages + [copy])
            emit(.added([copy]))
        case .cancelled(let entry):
            guard let index else { return }
            pending.remove(at: index)
            emit(.outboxCancelled(entry))
        }
    }

    /// Takes out of ``pending`` every entry whose server copy is among
    /// `shownNow` (matched by request id), tells the view, and confirms it in
    /// the outbox so that it is not sent again: an echo that beats the send's
    /// answer is shown once, never beside its pending entry.
    func confirmEchoes(_ shownNow: [Message]) {
        guard let outbox, !pending.isEmpty else { return }
        for copy in shownNow {
            guard let requestID = copy.requestID, copy.isSent,
                let index = pending.firstIndex(where: { $0.requestID == requestID })
            else { continue }
            let entry = pending.remove(at: index)
            emit(.outboxConfirmed(entry, copy))
            // Written on the outbox's own queue; a failure leaves the entry to its delivery, which the server answers with this copy.
            Task { _ = try? await outbox.confirm(copy) }
        }
    }
}
