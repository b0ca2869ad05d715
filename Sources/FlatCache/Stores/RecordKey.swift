import Foundation

/// A string compared, hashed and ordered by its UTF-8 bytes, as the on-disk
/// format orders and matches keys (channel URLs, user ids).
///
/// Swift's `String` equality treats canonically equivalent strings ("é" and
/// "e" + U+0301) as equal; their files and server ids are not, so keys are
/// matched and sorted byte for byte. Wraps the string itself: making a key
/// allocates nothing.
struct RecordKey: Hashable, Comparable {
    let string: String

    init(_ string: String) {
        self.string = string
    }

    static func == (lhs: RecordKey, rhs: RecordKey) -> Bool {
        lhs.string.utf8.count == rhs.string.utf8.count && compareBytes(lhs.string, rhs.string) == 0
    }

    static func < (lhs: RecordKey, rhs: RecordKey) -> Bool {
        compareBytes(lhs.string, rhs.string) < 0
    }

    func hash(into hasher: inout Hasher) {
        if let hashed: Void = string.utf8.withContiguousStorageIfAvailable({ hasher.combine(bytes: UnsafeRawBufferPointer($0)) }) {
            return hashed
        }
        // Same input to the hasher as the fast path, or equal keys would hash apart.
        Array(string.utf8).withUnsafeBytes { hasher.combine(bytes: $0) }
    }

    /// Negative, zero or positive as `a`'s UTF-8 bytes sort before, equal or after `b`'s.
    private static func compareBytes(_ a: String, _ b: String) -> Int {
        let fast = a.utf8.withContiguousStorageIfAvailable { x in
            b.utf8.withContiguousStorageIfAvailable { y -> Int in
                let common = min(x.count, y.count)
                let order = common == 0 ? 0 : Int(memcmp(x.baseAddress!, y.baseAddress!, common))
                return order != 0 ? order : x.count - y.count
            }
        }
        if let fast = fast ?? nil { return fast }
        // Bridged or lazily decoded strings: the slow, always correct way.
        if a.utf8.elementsEqual(b.utf8) { return 0 }
        return a.utf8.lexicographicallyPrecedes(b.utf8) ? -1 : 1
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
