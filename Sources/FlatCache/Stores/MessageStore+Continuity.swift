import Foundation

/// Continuity: which time ranges of a channel the cache holds completely,
/// and the change log token it is in sync with (see ``ChannelContinuity``).
///
/// The continuity file is read and written holding the channel's message
/// file lock, and only when the message file is as it was when its
/// messages were read, with no change waiting for it: so what it says is
/// always said of the messages on disk. When another writer keeps changing
/// the channel, a read says less (nothing complete) rather than too much.
extension MessageStore {
    /// What the cache knows complete of a channel, and its change log token:
    /// nothing when the channel is not cached, expired, or was cached by plain saves.
    ///
    /// Writes the channel's changes waiting for write-behind first.
    /// - important: Requires disk I/O.
    /// - Parameter channelURL: The channel's URL.
    /// - Returns: The channel's continuity.
    /// - Throws: ``FlatCacheError/emptyChannelURL`` or a file-system error.
    func continuity(in channelURL: String) throws(FlatCacheError) -> ChannelContinuity {
        let file = try layout.messagesFile(forChannel: channelURL)
        guard used(file) else { return ChannelContinuity() }
        // Most channels have none: one `stat`, not a read of their messages.
        guard try FileSystem.entry(at: layout.continuityFile(of: file).path) != .missing else { return ChannelContinuity() }
        return try withConsistentMessages(in: file) { (record, _) throws(FlatCacheError) in record ?? ChannelContinuity() }
            ?? ChannelContinuity()
    }

    /// Makes `messages` the cached content of a channel within `range` (the
    /// server's answer for those times): cached messages created in `range`
    /// that are not among them go, the others are upserted, and `range` is
    /// recorded as complete. Messages outside the range are kept. Unlike
    /// `save(_:)` it is written before it returns, whatever the store's tier.
    ///
    /// Retention still keeps the channel's newest
    /// ``Configuration/maxMessagesPerChannel``; what it drops is no longer complete.
    /// - important: Requires disk I/O.
    /// - Parameters:
    ///   - messages: The server's messages created in `range`.
    ///   - channelURL: The channel's URL.
    ///   - range: Milliseconds since 1970, both ends included; a lower bound of
    ///     ``ChannelContinuity/channelStart`` means from the channel's first message.
    /// - Returns: The message file written or unchanged, records left out and dropped.
    /// - Throws: ``FlatCacheError/messageInWrongChannel(messageID:channelURL:expectedChannelURL:)``
    ///   or ``FlatCacheError/misplacedMessage(messageID:channelURL:expectedChannelURL:)`` (also
    ///   for a message created outside `range`) before anything is written,
    ///   ``FlatCacheError/readOnlyCache(_:)``, ``FlatCacheError/emptyChannelURL``, or a
    ///   serialization or file-system error.
    @discardableResult
    func replace(
        _ messages: some Sequence<Message>, in channelURL: String, covering range: ClosedRange<Int64>
    ) throws(FlatCacheError) -> SaveResult {
        let file = try layout.messagesFile(forChannel: channelURL)
        var result = SaveResult()
        let fresh = try sent(messages, in: channelURL, counting: &result)
        if let outside = fresh.first(where: { !range.contains($0.createdAt) }) {
            throw .misplacedMessage(
                messageID: "\(outside.messageID)", channelURL: "\(channelURL) at \(outside.createdAt)",
                expectedChannelURL: "\(channelURL) within \(range)")
        }
        try storage.requireWritable()
        _ = try storage.serialize(fresh)  // before anything changes
        let limit = maxPerChannel
        let expired = saved(file)
        let change = Change<Message>(
            apply: { cached, dropped in
                let shown = Self.shown(expired ? [] : cached ?? [], limit: limit, dropped: &dropped)
                let kept = shown.filter { !range.contains($0.createdAt) }
                return Self.retained(Self.upserting(fresh, into: kept), limit: limit, dropped: &dropped)
            }, replacesAll: expired)
        let written = try engine.write(change, to: file, rule: appendRule)
        result.count(written.outcome)
        result.recordsDropped += written.dropped
        try updateContinuity(in: file) { continuity, messages in
            continuity.insert(range)
            // Retention dropped the oldest: of their last millisecond, some may be gone.
            if written.dropped > 0, let oldest = messages.first { continuity.forget(through: oldest.createdAt) }
        }
        return result
    }

    /// Records the change log token the channel's cached messages are in
    /// sync with (after its changes were applied), keeping its ranges.
    ///
    /// Nothing is recorded for a channel not cached.
    /// - important: Requires disk I/O.
    /// - Parameters:
    ///   - token: The token, or `nil` to forget it.
    ///   - channelURL: The channel's URL.
    /// - Throws: ``FlatCacheError/readOnlyCache(_:)``, ``FlatCacheError/emptyChannelURL`` or a file-system error.
    func setChangeLogToken(_ token: String?, in channelURL: String) throws(FlatCacheError) {
        let file = try layout.messagesFile(forChannel: channelURL)
        try storage.requireWritable()
        try updateContinuity(in: file) { continuity, _ in continuity.changeLogToken = token }
    }

    // MARK: - The file

    /// Reads the continuity and hands it, validated against the channel's
    /// messages, to `body` with them, holding the message file's lock and
    /// only when nothing changed them since they were read. `nil` when the
    /// channel has no message file, or it kept changing (three tries).
    private func withConsistentMessages<T>(
        in file: RecordFile, _ body: (ChannelContinuity?, [Message]) throws(FlatCacheError) -> T
    ) throws(FlatCacheError) -> T? {
        let continuityFile = layout.continuityFile(of: file)
        // A damaged file is reported once, then read as none (a read-only cache cannot move it aside).
        var reported = false
        for _ in 0..<3 {
            try engine.writeWaitingChanges(file)
            guard let stamp = try FileSystem.stamp(at: file.path) else { return nil }
            let records: [Message]? = try engine.records(file, rule: appendRule)
            guard let records else { return nil }
            let messages = newest(records)
            var damaged: Corruption?
            let outcome = try storage.withLock(file) { () throws(FlatCacheError) -> T? in
                guard try FileSystem.stamp(at: file.path) == stamp, !engine.hasChangesWaiting(file, ignoringMemoryOnly: true)
                else { return nil }
                switch try ContinuityRecord.read(continuityFile, finishing: !storage.isReadOnly) {
                case .success(let record): return try body(record?.validated(against: messages), messages)
                case .failure(let corruption):
                    if reported { return try body(nil, messages) }
                    damaged = corruption
                }
                return nil
            }
            if let damaged {
                // Reported and moved aside like any damaged file: the channel's messages are fine, nothing is known complete.
                _ = try storage.isolate(continuityFile, because: damaged, moving: true)
                reported = true
                continue
            }
            if let outcome { return outcome }
        }
        return nil
    }

    /// Changes the continuity of the channel in `file` with `change`
    /// (given it and the channel's messages) and writes it, after the
    /// messages. Does nothing when the channel is not cached or kept changing.
    private func updateContinuity(
        in file: RecordFile, _ change: @escaping (inout ChannelContinuity, [Message]) -> Void
    ) throws(FlatCacheError) {
        let continuityFile = layout.continuityFile(of: file)
        let synchronized = storage.synchronized
        _ = try withConsistentMessages(in: file) { (found, messages) throws(FlatCacheError) in
            var continuity = found ?? ChannelContinuity()
            change(&continuity, messages)
            let record = ContinuityRecord(continuity: continuity, anchor: messages.first.map(ContinuityRecord.Anchor.init))
            _ = try continuityFile.write([try record.serialize()], synchronized: synchronized)
        }
    }
}
