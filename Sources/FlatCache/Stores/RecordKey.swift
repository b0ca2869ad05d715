/// A string compared by its UTF-8 bytes, as the on-disk format orders and
/// matches keys (channel URLs, user ids).
///
/// Swift's `String` equality treats canonically equivalent strings ("é" and
/// "e" + U+0301) as equal; their files and server ids are not, so keys are
/// matched and sorted byte for byte.
struct RecordKey: Hashable, Comparable {
    let bytes: [UInt8]

    init(_ string: String) {
        bytes = Array(string.utf8)
    }

    static func < (lhs: RecordKey, rhs: RecordKey) -> Bool {
        lhs.bytes.lexicographicallyPrecedes(rhs.bytes)
    }
}

extension Sequence {
    /// `existing` with each of these elements put in place of the one with the
    /// same key, or added; among several with one key, the last wins.
    func upserted<Key: Hashable>(into existing: [Element], by key: (Element) -> Key) -> [Element] {
        var merged = existing
        var index = [Key: Int](minimumCapacity: merged.count)
        for (position, element) in merged.enumerated() { index[key(element)] = position }
        for element in self {
            if let position = index[key(element)] {
                merged[position] = element
            } else {
                index[key(element)] = merged.count
                merged.append(element)
            }
        }
        return merged
    }
}
