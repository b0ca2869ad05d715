import Foundation

/// Edits and deletions as lines appended to a channel's file (format 2),
/// so that a change log costs the size of its changes, not of the channel.
extension MessageStore {
    /// Makes `change`, which upserts `changed` (serialized as `lines`) and
    /// then deletes the messages with ids in `deleted`, writable as appended
    /// lines (``Change/makeAppendable(upserts:deletions:keys:serialize:)``),
    /// the deletions in id order. Deletions of an id type with no byte form
    /// (``MessageIDBytes``) leave it a rewrite.
    static func makeAppendable(
        _ change: inout Change<Message>, upserting changed: [Message], lines: [Data],
        deleting deleted: Set<Message.MessageID>, storage: RecordStorage
    ) {
        var deletions = [(key: Message.MessageID, bytes: Data)]()
        for id in deleted.sorted() {
            guard let bytes = MessageIDBytes.bytes(id) else { return }
            deletions.append((id, bytes))
        }
        change.makeAppendable(
            upserts: zip(changed, lines).map { ($0.0.messageID, $0.1) }, deletions: deletions, keys: { messageIDs(of: $0) },
            serialize: { try? storage.serialize([$0]).first })
        // The same upserts as the lines (a deleted id's upsert has none), for the search index.
        if change.blindEdit != nil {
            change.lineRecords = (deleted.isEmpty ? changed : changed.filter { !deleted.contains($0.messageID) }, deletions.map(\.bytes))
        }
    }

    /// The ids of `messages`, in order, read through a buffer pointer and
    /// specialized for ``ChatMessage``: generic code copies each message
    /// (retaining its strings) to read its id.
    @_specialize(where Message == ChatMessage)
    static func messageIDs(of messages: [Message]) -> [Message.MessageID] {
        messages.withUnsafeBufferPointer { buffer in
            var ids = [Message.MessageID]()
            ids.reserveCapacity(buffer.count)
            for index in buffer.indices { ids.append(buffer[index].messageID) }
            return ids
        }
    }

    /// A change log's upserts and deletions applied to `messages` in place, as
    /// ``upserting(_:into:)``, ``remove(_:from:)`` and ``retained(_:limit:dropped:)``
    /// in turn would (without counting what retention leaves out): `messages`,
    /// in canonical order as every list of a file's records is, is read once
    /// for the positions of the incoming and deleted ids, and only the
    /// messages they name are touched. It is sorted again only when a
    /// replacement changes its place's order or a new message does not come
    /// after the last: on a list in memory, each extra pass reads every
    /// message's cache lines (issue 33).
    @_specialize(where Message == ChatMessage)
    static func applyEdit(
        _ incoming: [Message], deleting deleted: Set<Message.MessageID>, limit: Int, to messages: inout [Message]
    ) {
        if messages.count > limit { messages.removeFirst(messages.count - limit) }
        // The last incoming message of each id, then, in one pass, where the existing ones with those ids
        // are (the last, should an id repeat) and which positions hold a deleted id.
        var last = [Message.MessageID: Int](minimumCapacity: incoming.count)
        for position in incoming.indices { last[incoming[position].messageID] = position }
        var found = [Message.MessageID: Int](minimumCapacity: incoming.count)
        var doomed = [Int]()
        messages.withUnsafeBufferPointer { buffer in
            for position in buffer.indices {
                let id = buffer[position].messageID
                if last[id] != nil { found[id] = position }
                if !deleted.isEmpty, deleted.contains(id) { doomed.append(position) }
            }
        }
        var ordered = true
        for (id, position) in found {
            let message = incoming[last[id]!]
            // An edit keeps its time and id, hence its place; anything else is checked below.
            if CanonicalOrder.precedes(message, messages[position]) || CanonicalOrder.precedes(messages[position], message) {
                ordered = false
            }
            messages[position] = message
        }
        for position in doomed.reversed() { messages.remove(at: position) }
        // The others added in the order given, each once, as its last version, unless deleted too.
        for position in incoming.indices {
            let id = incoming[position].messageID
            guard found[id] == nil, let newest = last.removeValue(forKey: id), !deleted.contains(id) else { continue }
            if ordered, let previous = messages.last, !CanonicalOrder.precedes(previous, incoming[newest]) { ordered = false }
            messages.append(incoming[newest])
        }
        if !ordered { CanonicalOrder.order(&messages) }
        if messages.count > limit { messages.removeFirst(messages.count - limit) }
    }
}
