import Foundation

/// A line appended after a data file's canonical lines (format 2; docs/format.md,
/// "Appended lines"): a newer version of a record, or the deletion of one.
///
/// Its first byte says which, and is one no Base64 line starts with, so a
/// reader tells it from a canonical line by that byte alone; the rest of the
/// line is the record (a deletion: the message id) in Base64, as a canonical
/// line holds a record (sealed, in an encrypted folder, with the kind in its
/// associated data).
struct AppendedLine: Sendable, Hashable {
    /// What an appended line does.
    enum Kind: UInt8, Sendable {
        /// `*`: this record replaces the one with its key, or is added.
        case upsert = 0x2A
        /// `-`: the record with this record's key is gone.
        case deletion = 0x2D

        /// The kind a line starting with `byte` has; `nil` for a canonical line.
        init?(firstByte byte: UInt8) { self.init(rawValue: byte) }
    }

    let kind: Kind
    /// An upsert's record bytes, or the id a deletion names (``MessageIDBytes``); opened, in an encrypted folder.
    let record: Data
}

/// What a data file's lines hold: its canonical records, then the lines appended after them.
struct FileLines: Sendable, Equatable {
    /// The canonical lines' records, in file order.
    var records: [Data]
    /// The appended lines, in file order.
    var appended: [AppendedLine] = []

    /// How many lines: canonical and appended.
    var lineCount: Int { records.count + appended.count }


}

extension RecordLines {
    /// The bytes of `lines` appended to the data file `name` (sealed by `sealer` when there is one).
    static func encode(_ lines: [AppendedLine], sealer: Sealer?, fileName name: String) -> Data {
        var body = Data()
        for line in lines {
            let bytes: Data
            if let sealer {
                let (sealed, ranges) = sealer.seal([line.record], associatedData: Sealer.associatedData(fileName: name, appended: line.kind))
                bytes = sealed[ranges[0]]
            } else {
                bytes = line.record
            }
            body.append(line.kind.rawValue)
            body.append(encode([bytes]))
        }
        return body
    }

    /// Whether the plain (unsealed) `body` may already say one of `lines`:
    /// it holds an upsert's record as a line (canonical or appended) or a
    /// deletion's line byte for byte. Lines are compared only where their
    /// lengths agree, none decoded; it may say yes for a line that a later
    /// one overrides, never no for a line the body holds.
    static func mayHold(_ lines: [AppendedLine], in body: Data) -> Bool {
        // Each line as the body would hold it, without its newline: an upsert's record as a canonical line
        // (an appended one is the same after its `*`), a deletion with its `-`.
        let wanted = lines.map { line in
            var bytes = encode([line.record])
            bytes.removeLast()
            if line.kind == .deletion { bytes.insert(line.kind.rawValue, at: bytes.startIndex) }
            return bytes
        }
        let lengths = Set(wanted.map(\.count))
        return body.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return false }
            var start = 0
            while start < raw.count {
                let end = memchr(base + start, Int32(newline), raw.count - start).map { UnsafeRawPointer($0) - base } ?? raw.count
                var (from, length) = (start, end - start)
                if length > 0, raw[from] == AppendedLine.Kind.upsert.rawValue { (from, length) = (from + 1, length - 1) }
                if lengths.contains(length),
                    wanted.contains(where: { line in
                        line.count == length && (length == 0 || line.withUnsafeBytes { memcmp($0.baseAddress!, base + from, length) == 0 })
                    })
                {
                    return true
                }
                start = end + 1
            }
            return false
        }
    }

    /// Whether the last line of `body` is an appended one: then, canonical
    /// lines coming first, the file has appended lines; else it has none.
    static func endsWithAppended(_ body: Data, lines: [Range<Int>]) -> Bool {
        guard let last = lines.last, !last.isEmpty else { return false }
        return AppendedLine.Kind(firstByte: body[body.startIndex + last.lowerBound]) != nil
    }

    /// The appended lines in `body` (which holds only appended lines, the
    /// first of them line `firstLine` of the file), opened by `sealer` when there is one.
    static func decodeAppended(
        _ body: Data, sealer: Sealer?, fileName name: String, firstLine: Int
    ) throws(Corruption) -> [AppendedLine] {
        let ranges = try lineRanges(body)
        var lines = [AppendedLine]()
        lines.reserveCapacity(ranges.count)
        let openers = sealer.map { sealer in
            (upsert: Sealer.LineOpener(sealer, associatedData: Sealer.associatedData(fileName: name, appended: .upsert)),
             deletion: Sealer.LineOpener(sealer, associatedData: Sealer.associatedData(fileName: name, appended: .deletion)))
        }
        for (index, range) in ranges.enumerated() {
            let number = firstLine + index
            guard let kind = AppendedLine.Kind(firstByte: body[body.startIndex + range.lowerBound]) else {
                throw .canonicalLineAfterAppended(line: number)
            }
            let rest = range.lowerBound + 1..<range.upperBound
            let opener = openers.map { kind == .upsert ? $0.upsert : $0.deletion }
            lines.append(AppendedLine(kind: kind, record: try decodeLine(body, in: rest, number: number, opener: opener)))
        }
        return lines
    }
}
