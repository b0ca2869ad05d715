import Foundation

/// Edits and deletions as lines appended to a channel's file (format 2),
/// so that a change log costs the size of its changes, not of the channel.
extension MessageStore {
    /// The lines that upsert `changed` (serialized as `lines`) and then delete
    /// the messages with ids in `deleted`, over a file holding given records:
    /// a `*` line for each message not already there byte for byte, then a
    /// `-` line, carrying the record it deletes, for each deleted id the file
    /// holds (in id order, so that the same change gives the same bytes).
    /// `nil` when a record on disk does not serialize (the write then rewrites,
    /// and reports it).
    static func edit(
        upserting changed: [Message], lines: [Data], deleting deleted: Set<Message.MessageID>, storage: RecordStorage
    ) -> @Sendable ([Message]) -> [(kind: AppendedLine.Kind, record: Message, bytes: Data)]? {
        let deletedInOrder = deleted.sorted()
        return { records in
            var positions = [Message.MessageID: Int](minimumCapacity: records.count)
            for index in records.indices { positions[records[index].messageID] = index }
            var found = [(kind: AppendedLine.Kind, record: Message, bytes: Data)]()
            for (message, line) in zip(changed, lines) where !deleted.contains(message.messageID) {
                if let position = positions[message.messageID] {
                    guard let onDisk = try? storage.serialize([records[position]]) else { return nil }
                    if onDisk[0] == line { continue }
                }
                found.append((.upsert, message, line))
            }
            for id in deletedInOrder {
                guard let position = positions[id] else { continue }
                guard let bytes = try? storage.serialize([records[position]]) else { return nil }
                found.append((.deletion, records[position], bytes[0]))
            }
            return found
        }
    }
}
