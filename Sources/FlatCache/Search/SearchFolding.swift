import Foundation

/// The form a word is indexed and looked up under, so that "José", "JOSE" and
/// "jose" are one word, and "Ｔｏｋｙｏ" is "tokyo".
///
/// Each scalar folds on its own, from a table Foundation's
/// `folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive])`
/// fills once per process: calling Foundation per word cost more than the rest
/// of reading a message. A combining accent (U+0300–U+036F) is dropped, so that a
/// letter followed by one folds as the letter with it does.
enum SearchFolding {
    /// The word the UTF-8 `bytes` hold in `range`, in lower case, without diacritics ("é" is "e",
    /// "ß" is "ss", "ø" is "o"), full-width and half-width forms made plain, joiners and
    /// variation selectors dropped.
    ///
    /// - Parameter keepingDiacritics: keep every mark and fold width alone: for scripts
    ///   written without spaces, where a mark is part of the letter (Thai vowels and tone
    ///   marks, Japanese voicing), and which have no case.
    static func fold(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, keepingDiacritics: Bool = false) -> String {
        if !bytes[range].contains(where: { $0 >= 0x80 }) {
            // ASCII, most words of most chats: lower case by byte.
            return String(unsafeUninitializedCapacity: range.count) { out in
                for (offset, byte) in bytes[range].enumerated() { out[offset] = (0x41...0x5A).contains(byte) ? byte | 0x20 : byte }
                return range.count
            }
        }
        var folded = String.UnicodeScalarView()
        var index = range.lowerBound
        while index < range.upperBound {
            let scalar = SearchBytes.scalar(in: bytes, at: &index)
            let value = scalar.value
            if value < 0x80 {
                folded.append((0x41...0x5A).contains(value) ? Unicode.Scalar(UInt8(value) | 0x20) : scalar)
            } else if scalar.searchClass == .joiner {
                continue
            } else if keepingDiacritics {
                if (0xFF00...0xFFEF).contains(value), let mapped = widthTable[scalar] {
                    folded.append(contentsOf: mapped.unicodeScalars)
                } else {
                    folded.append(scalar)
                }
            } else if (0x300...0x36F).contains(value) {
                continue
            } else if let mapped = Self.mapped(scalar) {
                folded.append(contentsOf: mapped.unicodeScalars)
            } else {
                folded.append(scalar)
            }
        }
        return String(folded)
    }

    /// The emoji the UTF-8 `bytes` hold in `range`, as its emoji scalars alone, so that "👍🏽"
    /// is found as "👍" and "❤️" as "❤".
    static func foldEmoji(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
        var scalars = String.UnicodeScalarView()
        var index = range.lowerBound
        while index < range.upperBound {
            let scalar = SearchBytes.scalar(in: bytes, at: &index)
            if scalar.searchClass == .emoji && !scalar.continuesEmoji { scalars.append(scalar) }
        }
        return String(scalars)
    }

    /// What `scalar` folds to, when that is not itself.
    private static func mapped(_ scalar: Unicode.Scalar) -> String? {
        let value = scalar.value
        if value < tableEnd { return table[Int(value - 0x80)] }
        if (0xFB00...0xFB4F).contains(value) || (0xFF00...0xFFEF).contains(value) || (0x10400...0x1E95F).contains(value) {
            // Ligatures, full and half width, and the cased scripts past the table: rare enough to ask Foundation.
            let folded = foundationFold(String(scalar))
            return folded == String(scalar) ? nil : folded
        }
        return nil
    }

    /// Scalars from U+0080 below this are folded through ``table``; they hold every cased script but a few rare ones.
    private static let tableEnd: UInt32 = 0x3000

    /// What each scalar from U+0080 to ``tableEnd`` folds to, `nil` where it folds to itself.
    private static let table: [String?] = (UInt32(0x80)..<tableEnd).map { value in
        guard let scalar = Unicode.Scalar(value) else { return nil }
        let folded = foundationFold(String(scalar))
        return folded == String(scalar) ? nil : folded
    }

    /// Full-width and half-width forms and what they fold to (for scripts whose marks stay).
    private static let widthTable: [Unicode.Scalar: String] = {
        var table = [Unicode.Scalar: String]()
        for value in UInt32(0xFF00)...0xFFEF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let folded = String(scalar).folding(options: [.caseInsensitive, .widthInsensitive], locale: nil)
            if folded != String(scalar) { table[scalar] = folded }
        }
        return table
    }()

    /// Foundation's fold of a scalar, then letters with a stroke or bar as their base letter:
    /// they have no canonical decomposition, so Foundation keeps them.
    private static func foundationFold(_ scalar: String) -> String {
        let folded = scalar.folding(options: [.caseInsensitive, .diacriticInsensitive, .widthInsensitive], locale: nil)
        return String(String.UnicodeScalarView(folded.unicodeScalars.map { strokes[$0] ?? $0 }))
    }

    /// Letters with a stroke or bar, which have no canonical decomposition, and their base letter (lower case).
    private static let strokes: [Unicode.Scalar: Unicode.Scalar] = [
        "ø": "o", "ł": "l", "đ": "d", "ħ": "h", "ŧ": "t", "ƀ": "b", "ɨ": "i", "ı": "i", "ƶ": "z", "ǥ": "g",
    ]
}
