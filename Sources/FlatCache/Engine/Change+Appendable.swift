import Foundation

extension Change {
    /// Makes the change, which upserts `upserts` (each record's key and
    /// serialized line, in order) and then deletes the records with the
    /// keys of `deletions` (each key and its bytes, ``AppendedLine``'s
    /// payload), writable as appended lines (format 2; ``edit`` and
    /// ``blindEdit``): `*` lines for the upserts in the order given, then `-`
    /// lines for the deletions in the order given (callers sort them, so
    /// that the same change gives the same bytes). A change whose upserts
    /// name one key twice stays a rewrite.
    ///
    /// - Parameters:
    ///   - keys: The key of each record on disk (a message id, a channel URL's or user id's
    ///     bytes), in order: read in place through a buffer pointer, for a record passed by
    ///     value, or read through an array's subscript in generic code, is copied, its strings
    ///     retained, once per record on disk.
    ///   - serialize: A record's bytes, to tell an upsert the file already holds byte for byte.
    @_specialize(where R == ChatMessage, Key == Int64)
    mutating func makeAppendable<Key: Hashable & Sendable>(
        upserts: [(key: Key, line: Data)], deletions: [(key: Key, bytes: Data)],
        keys: @escaping @Sendable (_ records: [R]) -> [Key], serialize: @escaping @Sendable (R) -> Data?
    ) {
        // A change that names one key twice keeps the last given, and its lines come in the file's order,
        // not the order given: it is written whole instead.
        let upsertKeys = Set(upserts.map(\.key))
        guard upsertKeys.count == upserts.count else { return }
        let deleted = Set(deletions.map(\.key))
        let upserts = upserts.filter { !deleted.contains($0.key) }
        let deletionLines = deletions.map { AppendedLine(kind: .deletion, record: $0.bytes) }
        blindEdit = (upserts.map { AppendedLine(kind: .upsert, record: $0.line) } + deletionLines, upserts.count)
        edit = { records in
            // Where the records with the change's keys are (the last, should a key repeat). The set is
            // made here, when a write needs it, not for every save (a burst makes a change per message).
            let wanted = upsertKeys.union(deleted)
            var positions = [Key: Int](minimumCapacity: wanted.count)
            // With the records the deletions take (each record with a deleted key) and those the
            // upserts add (keys on no record), how many the change leaves.
            var count = records.count
            let onDisk = keys(records)
            for index in onDisk.indices where wanted.contains(onDisk[index]) {
                positions[onDisk[index]] = index
                if deleted.contains(onDisk[index]) { count -= 1 }
            }
            var found = [AppendedLine]()
            for upsert in upserts {
                // A record on disk byte for byte needs no line.
                if let position = positions[upsert.key] {
                    guard let onDisk = serialize(records[position]) else { return nil }
                    if onDisk == upsert.line { continue }
                } else {
                    count += 1
                }
                found.append(AppendedLine(kind: .upsert, record: upsert.line))
            }
            for (deletion, line) in zip(deletions, deletionLines) where positions[deletion.key] != nil { found.append(line) }
            return (found, count)
        }
    }
}
