/// One term's documents and its places in each, packed: for each document, ascending,
/// the gap from the last document's number, doubled, plus 1 when the term has one place
/// in it (most have: a short message says a word once); then, only when it has more, how
/// many; then each place's gap from the one before. Every number is a LEB128
/// variable-length integer (7 bits a byte). A common term costs about a byte a document
/// and a byte a place: the index of L-sized data took 45 MB so, against 107 MB as arrays
/// of 32-bit numbers, and the count folded into the gap saved a quarter of the postings.
struct SearchPostings: Sendable {
    /// An empty list.
    init() {}

    /// The packed documents and places.
    private(set) var bytes: [UInt8] = []
    /// How many documents.
    private(set) var count = 0
    /// The last document's number; -1 before the first.
    private(set) var last: Int32 = -1

    /// Postings read back from a snapshot: `bytes` as ``bytes`` held them; `nil` when they are not
    /// postings of the documents whose lengths in tokens are `lengths` (a document out of order or
    /// out of range, a place past its document's end, a number cut short), so that a damaged
    /// snapshot is refused instead of read past its end.
    init?(bytes: [UInt8], lengths: [Int32]) {
        let documentCount = lengths.count
        var offset = 0
        var document: Int64 = -1
        var count = 0
        func next() -> UInt32? {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while offset < bytes.count, shift < 35 {
                let byte = bytes[offset]
                offset += 1
                value |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 { return value <= UInt64(UInt32.max) ? UInt32(value) : nil }
                shift += 7
            }
            return nil
        }
        while offset < bytes.count {
            guard let head = next(), head >> 1 > 0 else { return nil }
            let places: UInt32
            if head & 1 == 1 {
                places = 1
            } else {
                // One place is said by the flag alone: a count of one (or none) here is not canonical.
                guard let count = next(), count > 1 else { return nil }
                places = count
            }
            document += Int64(head >> 1)
            guard document < documentCount else { return nil }
            var place: UInt64 = 0
            for index in 0..<places {
                guard let step = next() else { return nil }
                place += UInt64(step)
                guard place < UInt64(lengths[Int(document)]), index == 0 || step > 0 else { return nil }
            }
            count += 1
        }
        self.bytes = bytes
        self.count = count
        last = Int32(document)
    }

    /// Where a reader is: the document it read last and where that document's places are.
    struct Cursor {
        /// The next byte to read.
        fileprivate var offset = 0
        /// The document read last; -1 before the first.
        fileprivate(set) var document: Int32 = -1
        /// How many places it has.
        fileprivate(set) var placeCount = 0
        /// Where its places start in ``SearchPostings/bytes``.
        fileprivate var placesOffset = 0
        /// Whether its places were read past (the cursor is at the next document).
        fileprivate var placesRead = false

        init() {}
    }

    /// Adds `document` (above every document added before) with its ascending `places`.
    mutating func append(_ document: Int32, _ places: some Collection<UInt32>) {
        precondition(document > last, "documents are added in ascending order")
        precondition(!places.isEmpty, "a document holds a term at one place at least")
        let gap = UInt32(document - last)
        precondition(gap < 1 << 31, "a gap is written doubled in 32 bits")
        if places.count == 1 {
            write(gap << 1 | 1)
        } else {
            write(gap << 1)
            write(UInt32(places.count))
        }
        var previous: UInt32 = 0
        for place in places {
            write(place - previous)
            previous = place
        }
        last = document
        count += 1
    }

    /// Moves `cursor` to the next document; `false` after the last.
    func next(_ cursor: inout Cursor) -> Bool {
        if !cursor.placesRead, cursor.document >= 0 { skipPlaces(&cursor) }
        guard cursor.offset < bytes.count else { return false }
        let head = read(&cursor.offset)
        cursor.document += Int32(head >> 1)
        cursor.placeCount = head & 1 == 1 ? 1 : Int(read(&cursor.offset))
        cursor.placesOffset = cursor.offset
        cursor.placesRead = false
        return true
    }

    /// Moves `cursor` forward to the first document at or after `document`; `false` when there is none.
    func seek(_ cursor: inout Cursor, to document: Int32) -> Bool {
        if cursor.document >= document { return true }
        while next(&cursor) {
            if cursor.document >= document { return true }
        }
        return false
    }

    /// The places of the document `cursor` is at, ascending, into `places` (emptied first).
    func places(at cursor: inout Cursor, into places: inout [UInt32]) {
        places.removeAll(keepingCapacity: true)
        var offset = cursor.placesOffset
        var place: UInt32 = 0
        for _ in 0..<cursor.placeCount {
            place += read(&offset)
            places.append(place)
        }
        cursor.offset = offset
        cursor.placesRead = true
    }

    private func skipPlaces(_ cursor: inout Cursor) {
        var offset = cursor.placesOffset
        for _ in 0..<cursor.placeCount {
            while bytes[offset] & 0x80 != 0 { offset += 1 }
            offset += 1
        }
        cursor.offset = offset
        cursor.placesRead = true
    }

    private mutating func write(_ value: UInt32) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    private func read(_ offset: inout Int) -> UInt32 {
        var value: UInt32 = 0
        var shift: UInt32 = 0
        while true {
            let byte = bytes[offset]
            offset += 1
            value |= UInt32(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
    }
}
