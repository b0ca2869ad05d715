/// The keys of a file's records, read in place (messages have their own,
/// specialized: ``MessageStore/messageIDs(of:)``).
enum RecordKeys {
    /// `key` of each of `records`, in order, each record read through a
    /// buffer pointer: in generic code an array's subscript, or an iterator,
    /// copies each record (retaining its strings) to hand it over.
    static func of<R, Key>(_ records: [R], _ key: (borrowing R) -> Key) -> [Key] {
        records.withUnsafeBufferPointer { buffer in
            var keys = [Key]()
            keys.reserveCapacity(buffer.count)
            for index in buffer.indices { keys.append(key(buffer[index])) }
            return keys
        }
    }
}
