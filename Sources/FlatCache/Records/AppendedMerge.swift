import Foundation

/// What a data file's appended lines (format 2) make of its canonical
/// records: per key, the last line wins (a record, or its deletion), and
/// the records left come in canonical order (docs/format.md, "Appended lines").
///
/// A record's key is its message id. Only message files hold appended
/// lines; in any other file they make it damaged.
enum AppendedMerge {
    /// `canonical` (a file's canonical records, in file order) with `appended` applied in order.
    ///
    /// - Throws: ``Corruption/appendedLinesNotAllowed`` for records other than messages.
    static func records<R: CacheRecord>(_ canonical: [R], appended: [(kind: AppendedLine.Kind, record: R)]) throws(Corruption) -> [R] {
        guard !appended.isEmpty else { return canonical }
        if let type = R.self as? any MessageRecord.Type { return messages(type, canonical, appended) }
        throw .appendedLinesNotAllowed
    }

    private static func messages<R: CacheRecord, M: MessageRecord>(
        _: M.Type, _ canonical: [R], _ appended: [(kind: AppendedLine.Kind, record: R)]
    ) -> [R] {
        let merged = merge(canonical as! [M], appended.map { ($0.kind, $0.record as! M) }, key: \.messageID)
        return CanonicalOrder.messages(merged) as! [R]
    }

    /// The records left once each appended line has replaced, added or
    /// deleted the record with its key, in no particular order.
    static func merge<T, Key: Hashable>(
        _ canonical: [T], _ appended: [(kind: AppendedLine.Kind, record: T)], key: (T) -> Key
    ) -> [T] {
        var records = canonical
        var alive = [Bool](repeating: true, count: records.count)
        var index = [Key: Int](minimumCapacity: records.count + appended.count)
        for position in records.indices { index[key(records[position])] = position }
        for (kind, record) in appended {
            let found = index[key(record)]
            switch (kind, found) {
            case (.upsert, let position?): (records[position], alive[position]) = (record, true)
            case (.upsert, nil):
                index[key(record)] = records.count
                records.append(record)
                alive.append(true)
            case (.deletion, let position?): alive[position] = false
            case (.deletion, nil): break
            }
        }
        guard alive.contains(false) else { return records }
        return records.indices.compactMap { alive[$0] ? records[$0] : nil }
    }
}
