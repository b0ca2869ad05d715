import Foundation

/// The message store's changes, as the engine keeps them until they are written.
extension MessageStore {
    /// When new messages may be appended to a channel's file: each newer
    /// than every message before it, none with an id the file holds, and
    /// the file still within its limit plus ``slack(forLimit:)``.
    var appendRule: AppendRule<Message> {
        let (sum, overflow) = maxPerChannel.addingReportingOverflow(Self.slack(forLimit: maxPerChannel))
        let capacity = overflow ? Int.max : sum
        // The id's hash: two ids that collide only make an append take the slow, exact path.
        var rule = AppendRule<Message>(
            capacity: capacity, id: { Self.idKey($0.messageID) }, ids: { Self.idKeys(of: $0, count: $1) },
            precedes: { CanonicalOrder.precedes($0, $1) })
        rule.limit = maxPerChannel
        return rule
    }

    /// What a save of `messages` changes: an upsert per channel (see ``upserts(_:)``),
    /// and the messages left out counted.
    ///
    /// Specialized for ``ChatMessage``: a save of one message spent more on
    /// looking up generic types than on its own work (issue 32). It returns
    /// a `Result` because the compiler cannot specialize ahead of time a
    /// function that throws a typed error (it crashes). The usual sequences,
    /// one message and an array, are specialized too: copying one into an
    /// array looked up the array's type on every save.
    @_specialize(where Message == ChatMessage, Messages == CollectionOfOne<ChatMessage>)
    @_specialize(where Message == ChatMessage, Messages == [ChatMessage])
    func changes<Messages: Sequence<Message>>(
        saving messages: Messages
    ) -> (changes: Result<[(RecordFile, Change<Message>)], FlatCacheError>, counted: SaveResult) {
        var counted = SaveResult()
        let list = Array(messages)
        let changes = Result { () throws(FlatCacheError) in try upserts(try byChannel(list, counting: &counted)) }
        return (changes, counted)
    }

    /// The append rule's key for a message id.
    static func idKey(_ id: Message.MessageID) -> Int64 { Int64(truncatingIfNeeded: id.hashValue) }

    /// The keys of the first `count` of `messages`; specialized for ``ChatMessage``, where reading an id copies nothing.
    @_specialize(where Message == ChatMessage)
    static func idKeys(of messages: [Message], count: Int) -> Set<Int64> {
        var keys = Set<Int64>(minimumCapacity: count)
        for index in 0..<count { keys.insert(idKey(messages[index].messageID)) }
        return keys
    }

    /// The messages of `list` that may be cached, by channel (in the order of
    /// their keys); the others counted as left out.
    func byChannel(
        _ list: [Message], counting result: inout SaveResult
    ) throws(FlatCacheError) -> [(url: String, messages: [Message])] {
        // The usual save, one message or messages of one channel, needs no grouping.
        if let first = list.first, !first.channelURL.isEmpty,
            list.allSatisfy({ $0.isSent && $0.isInGroupChannel && RecordKey($0.channelURL) == RecordKey(first.channelURL) })
        {
            return [(first.channelURL, list)]
        }
        var channels = [RecordKey: (url: String, messages: [Message])]()
        for message in list {
            guard message.isSent, message.isInGroupChannel else {
                result.recordsLeftOut += 1
                continue
            }
            guard !message.channelURL.isEmpty else { throw .emptyChannelURL }
            channels[RecordKey(message.channelURL), default: (message.channelURL, [])].messages.append(message)
        }
        return channels.keys.sorted().compactMap { channels[$0] }
    }

    /// An upsert per channel. Every message is serialized here, before any
    /// change is made, so a record that cannot be encoded changes nothing;
    /// the bytes are kept for a write that appends them.
    func upserts(_ channels: [(url: String, messages: [Message])]) throws(FlatCacheError) -> [(RecordFile, Change<Message>)] {
        var changes = [(RecordFile, Change<Message>)]()
        for (url, incoming) in channels {
            let file = try layout.messagesFile(forChannel: url)
            let ordered = CanonicalOrder.messages(incoming)
            let lines = try storage.serialize(ordered)
            let limit = maxPerChannel
            if saved(file) {
                // Expired: the cached messages are gone as far as the app can tell; do not bring them back.
                // What another writer saved after this save was made is kept all the same (see `rebase`).
                changes.append((file, Change(
                    apply: { _, dropped in Self.retained(Self.upserting(incoming, into: []), limit: limit, dropped: &dropped) },
                    replacesAll: true, rebase: rebase)))
                continue
            }
            let voided = Change<Message>.Flag()
            var change = Change<Message>(apply: { cached, dropped in
                var droppedHere = 0
                let shown = Self.shown(cached ?? [], limit: limit, dropped: &droppedHere)
                let kept = Self.retained(Self.upserting(incoming, into: shown), limit: limit, dropped: &droppedHere)
                dropped += droppedHere
                // A message older than every kept one was dropped as it came: ranges that cover it no longer hold.
                if droppedHere > 0, let oldest = kept.first, let first = ordered.first, CanonicalOrder.precedes(first, oldest) {
                    voided.set()
                }
                return kept
            })
            change.appended = (ordered, lines)
            Self.makeAppendable(&change, upserting: ordered, lines: lines, deleting: [], storage: storage)
            change.voidsAttachment = voided
            changes.append((file, change))
        }
        return changes
    }

    /// Makes `fresh` the whole content of a channel, its newest `maxPerChannel` kept.
    ///
    /// What it leaves ignores what the file held, so it is worked out once,
    /// here, and serialized here (every record of `fresh`, before anything
    /// changes): the write takes those bytes instead of serializing again.
    func replacement(_ fresh: [Message]) throws(FlatCacheError) -> Change<Message> {
        var droppedByRetention = 0
        let kept = Self.retained(Self.upserting(fresh, into: []), limit: maxPerChannel, dropped: &droppedByRetention)
        let lines: [Data]
        do {
            lines = try storage.serialize(kept)
        } catch {
            _ = try storage.serialize(fresh)  // the error of the first bad record as given, as before
            throw error
        }
        // Fewer kept (a repeated id, retention): the others must serialize too.
        if kept.count != fresh.count { _ = try storage.serialize(fresh) }
        let dropped = droppedByRetention
        var change = Change<Message>(
            apply: { _, counted in
                counted += dropped
                return kept
            },
            replacesAll: true, rebase: rebase)
        change.replacementLines = lines
        return change
    }

    /// Upserts `changed` and removes the messages with ids in `deleted`. A
    /// channel never cached stays never cached when nothing is left.
    func changeLog(_ changed: [Message], deleted: Set<Message.MessageID>, fresh: Bool = false) throws(FlatCacheError) -> Change<Message> {
        let lines = try storage.serialize(changed)  // before anything changes
        let limit = maxPerChannel
        let voided = Change<Message>.Flag()
        var change = Change<Message>(apply: { cached, dropped in
            let base = fresh ? nil : cached
            var droppedHere = 0
            let shown = Self.shown(base ?? [], limit: limit, dropped: &droppedHere)
            var merged = Self.upserting(changed, into: shown)
            Self.remove(deleted, from: &merged)
            let kept = Self.retained(merged, limit: limit, dropped: &droppedHere)
            dropped += droppedHere
            if droppedHere > 0, let oldest = kept.first, changed.contains(where: { CanonicalOrder.precedes($0, oldest) }) {
                voided.set()
            }
            return base == nil && kept.isEmpty ? nil : kept
        }, replacesAll: fresh)
        if !fresh {
            Self.makeAppendable(&change, upserting: changed, lines: lines, deleting: deleted, storage: storage)
            // The same, in place, for a write that appended the change's lines and checked that
            // retention leaves nothing out (`apply` above, but nothing counted into `dropped`).
            change.applyInPlace = { records in Self.applyEdit(changed, deleting: deleted, limit: limit, to: &records) }
        }
        change.voidsAttachment = voided
        return change
    }

    // MARK: - Policies

    var policy: CachePolicy { engine.policy }

    /// Notes a load of the channel in `file`; `false` when it expired (the load is then a miss).
    func used(_ file: RecordFile) -> Bool {
        guard !policy.isExpired(file) else { return false }
        policy.touch(file, saved: false)
        return true
    }

    /// Notes a save of the channel in `file`; `true` when it had expired
    /// (the save then starts it afresh).
    @discardableResult
    func saved(_ file: RecordFile) -> Bool {
        let expired = policy.isExpired(file)
        // A memory-only save leaves the file as old as it was.
        policy.touch(file, saved: tier != .memory)
        return expired
    }
}
