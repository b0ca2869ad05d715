import Foundation

/// Edits and deletions as lines appended to a channel's file (format 2),
/// so that a change log costs the size of its changes, not of the channel.
extension MessageStore {
    /// Makes `change`, which upserts `changed` (serialized as `lines`) and
    /// then deletes the messages with ids in `deleted`, writable as appended
    /// lines (``Change/edit`` and ``Change/blindEdit``): `*` lines for the
    /// upserts in the order given, then `-` lines for the deletions in id
    /// order, so that the same change gives the same bytes. Deletions of an
    /// id type with no byte form (``MessageIDBytes``) leave it a rewrite.
    static func makeAppendable(
        _ change: inout Change<Message>, upserting changed: [Message], lines: [Data],
        deleting deleted: Set<Message.MessageID>, storage: RecordStorage
    ) {
        var byteForms = [(id: Message.MessageID, line: AppendedLine)]()
        for id in deleted.sorted() {
            guard let bytes = MessageIDBytes.bytes(id) else { return }
            byteForms.append((id, AppendedLine(kind: .deletion, record: bytes)))
        }
        let deletions = byteForms
        let upserts = zip(changed, lines).filter { !deleted.contains($0.0.messageID) }
        change.blindEdit = (upserts.map { AppendedLine(kind: .upsert, record: $0.1) } + deletions.map(\.line), upserts.count)
        change.edit = { records in
            var positions = [Message.MessageID: Int](minimumCapacity: records.count)
            for index in records.indices { positions[records[index].messageID] = index }
            var found = [AppendedLine]()
            for (message, line) in upserts {
                // A message on disk byte for byte needs no line.
                if let position = positions[message.messageID] {
                    guard let onDisk = try? storage.serialize([records[position]]) else { return nil }
                    if onDisk[0] == line { continue }
                }
                found.append(AppendedLine(kind: .upsert, record: line))
            }
            for deletion in deletions where positions[deletion.id] != nil { found.append(deletion.line) }
            return found
        }
    }
}
