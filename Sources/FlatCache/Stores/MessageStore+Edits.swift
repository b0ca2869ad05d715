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
}
