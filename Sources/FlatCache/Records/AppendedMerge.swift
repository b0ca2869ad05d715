import Foundation

/// What a data file's appended lines (format 2) make of its canonical
/// records: per key (a message id; a channel URL's or user id's UTF-8
/// bytes), the last line wins (a record, or its deletion), and the records
/// left come in canonical order (docs/format.md, "Appended lines").
///
/// Message files, `channels.lines` and `users.lines` hold appended lines; in
/// any other file they make it damaged.
enum AppendedMerge {
    /// An appended line, read: an upsert's record, or the id bytes a deletion names.
    enum Line<R> {
        case upsert(R)
        /// The deleted message's id, as ``MessageIDBytes`` writes it; `line` is its number in the file.
        case deletion(Data, line: Int)
    }

    /// `canonical` (a file's canonical records, in file order) with `appended` applied in order.
    ///
    /// - Throws: ``Corruption/appendedLinesNotAllowed`` for records other
    ///   than messages, channels and users, ``Corruption/undecodableRecord(line:reason:)``
    ///   for a deletion whose bytes are not a key of the record's type.
    static func records<R: CacheRecord>(_ canonical: [R], appended: [Line<R>]) throws(Corruption) -> [R] {
        guard !appended.isEmpty else { return canonical }
        if let type = R.self as? any MessageRecord.Type { return try messages(type, canonical, appended) }
        if let type = R.self as? any ChannelRecord.Type { return try channels(type, canonical, appended) }
        if let type = R.self as? any UserRecord.Type { return try users(type, canonical, appended) }
        throw .appendedLinesNotAllowed
    }

    private static func channels<R: CacheRecord, C: ChannelRecord>(
        _: C.Type, _ canonical: [R], _ appended: [Line<R>]
    ) throws(Corruption) -> [R] {
        let lines = try keyed(appended, key: { (record: C) in RecordKey(record.channelURL) })
        return CanonicalOrder.channels(merge(canonical as! [C], lines, key: { RecordKey($0.channelURL) })) as! [R]
    }

    private static func users<R: CacheRecord, U: UserRecord>(
        _: U.Type, _ canonical: [R], _ appended: [Line<R>]
    ) throws(Corruption) -> [R] {
        let lines = try keyed(appended, key: { (record: U) in RecordKey(record.userID) })
        return CanonicalOrder.users(merge(canonical as! [U], lines, key: { RecordKey($0.userID) })) as! [R]
    }

    /// `appended` with each line's key: a record's by `key`, a deletion's from its bytes, a
    /// channel URL's or user id's UTF-8 (not empty).
    private static func keyed<R, T>(
        _ appended: [Line<R>], key: (T) -> RecordKey
    ) throws(Corruption) -> [(kind: AppendedLine.Kind, key: RecordKey, record: T?)] {
        var lines = [(kind: AppendedLine.Kind, key: RecordKey, record: T?)]()
        for line in appended {
            switch line {
            case .upsert(let record):
                let typed = record as! T
                lines.append((.upsert, key(typed), typed))
            case .deletion(let bytes, let number):
                guard !bytes.isEmpty, let string = String(bytes: bytes, encoding: .utf8) else {
                    throw .undecodableRecord(line: number, reason: "a deletion's \(bytes.count) bytes are not a UTF-8 key")
                }
                lines.append((.deletion, RecordKey(string), nil))
            }
        }
        return lines
    }

    private static func messages<R: CacheRecord, M: MessageRecord>(
        _: M.Type, _ canonical: [R], _ appended: [Line<R>]
    ) throws(Corruption) -> [R] {
        var lines = [(kind: AppendedLine.Kind, key: M.MessageID, record: M?)]()
        lines.reserveCapacity(appended.count)
        for line in appended {
            switch line {
            case .upsert(let record):
                let message = record as! M
                lines.append((.upsert, message.messageID, message))
            case .deletion(let bytes, let number):
                guard let id = MessageIDBytes.id(bytes, as: M.MessageID.self) else {
                    throw .undecodableRecord(line: number, reason: "a deletion's \(bytes.count) bytes are not a \(M.MessageID.self) message id")
                }
                lines.append((.deletion, id, nil))
            }
        }
        let merged = merge(canonical as! [M], lines, key: \.messageID)
        return CanonicalOrder.messages(merged) as! [R]
    }

    /// The records left once each appended line has replaced or added the
    /// record with its key (an upsert), or deleted it, in no particular order.
    static func merge<T, Key: Hashable>(
        _ canonical: [T], _ appended: [(kind: AppendedLine.Kind, key: Key, record: T?)], key: (T) -> Key
    ) -> [T] {
        var records = canonical
        var alive = [Bool](repeating: true, count: records.count)
        var index = [Key: Int](minimumCapacity: records.count + appended.count)
        for position in records.indices { index[key(records[position])] = position }
        for line in appended {
            let found = index[line.key]
            switch (line.record, found) {
            case (let record?, let position?): (records[position], alive[position]) = (record, true)
            case (let record?, nil):
                index[line.key] = records.count
                records.append(record)
                alive.append(true)
            case (nil, let position?): alive[position] = false
            case (nil, nil): break
            }
        }
        guard alive.contains(false) else { return records }
        return records.indices.compactMap { alive[$0] ? records[$0] : nil }
    }
}

/// A message id as a deletion line holds it (format 2): an `Int64` id as
/// its 8 bytes, little-endian (two's complement); a `String` id as its UTF-8
/// bytes. Ids of other types have no such form: their deletions rewrite the file.
enum MessageIDBytes {
    /// The bytes of `id`; `nil` for an id type other than `Int64` and `String`.
    static func bytes<ID>(_ id: ID) -> Data? {
        if let number = id as? Int64 { return withUnsafeBytes(of: number.littleEndian) { Data($0) } }
        if let string = id as? String { return Data(string.utf8) }
        return nil
    }

    /// The id in `bytes`; `nil` when they are not one of type `ID`.
    static func id<ID>(_ bytes: Data, as type: ID.Type) -> ID? {
        if ID.self == Int64.self {
            guard bytes.count == 8 else { return nil }
            var value: Int64 = 0
            for (index, byte) in bytes.enumerated() { value |= Int64(byte) << (8 * index) }
            return value as? ID
        }
        if ID.self == String.self {
            guard let string = String(bytes: bytes, encoding: .utf8) else { return nil }
            return string as? ID
        }
        return nil
    }
}
