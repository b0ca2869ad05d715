import Foundation

/// The data-file body: each record's bytes in standard Base64 (RFC 4648,
/// padded, unwrapped) followed by one `\n`.
enum RecordLines {
    /// The file body for `records`, built in one buffer of the exact size.
    static func encode(_ records: [Data]) -> Data {
        let size = records.reduce(0) { $0 + Base64.encodedCount(of: $1.count) + 1 }
        var body = Data(count: size + 1)  // + 1: the encoder's terminating NUL after the last line
        body.withUnsafeMutableBytes { buffer in
            let base = buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
            var offset = 0
            for record in records {
                offset += record.withUnsafeBytes { Base64.encode($0, into: base + offset) }
                base[offset] = newline
                offset += 1
            }
        }
        body.count = size
        return body
    }

    /// The records in a file body, in file order: slices of one buffer, no copy each.
    ///
    /// - Throws: ``Corruption/missingFinalNewline`` or ``Corruption/invalidBase64(line:)``.
    static func decode(_ body: Data) throws(Corruption) -> [Data] {
        guard !body.isEmpty else { return [] }
        guard body.last == newline else { throw .missingFinalNewline }
        var decoded = Data(count: Base64.maximumDecodedCount(of: body.count) + 3)
        var ranges = [Range<Int>]()
        var failedLine: Int?
        decoded.withUnsafeMutableBytes { output in
            let target = output.baseAddress!.assumingMemoryBound(to: UInt8.self)
            body.withUnsafeBytes { input in
                let base = input.baseAddress!
                var start = 0
                var written = 0
                // memchr over the raw bytes: Data.split is a byte-by-byte generic loop, ~10x slower.
                while start < input.count {
                    let end = base.distance(to: memchr(base + start, Int32(newline), input.count - start)!)
                    let line = UnsafeRawBufferPointer(rebasing: input[start..<end])
                    guard let count = Base64.decode(line, into: target + written) else {
                        failedLine = ranges.count + 1
                        return
                    }
                    ranges.append(written..<written + count)
                    written += count
                    start = end + 1
                }
            }
        }
        if let failedLine { throw .invalidBase64(line: failedLine) }
        return ranges.map { decoded[$0] }
    }

    private static let newline = UInt8(ascii: "\n")
}
