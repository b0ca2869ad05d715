import Foundation

/// The data-file body: each record's bytes in standard Base64 (RFC 4648,
/// padded, unwrapped) followed by one `\n`.
enum RecordLines {
    /// The file body for `records`, built in one buffer.
    static func encode(_ records: some Sequence<Data>) -> Data {
        var body = Data()
        for record in records {
            body.append(record.base64EncodedData())
            body.append(newline)
        }
        return body
    }

    /// The records in a file body, in file order.
    ///
    /// - Throws: ``Corruption/missingFinalNewline`` or ``Corruption/invalidBase64(line:)``.
    static func decode(_ body: Data) throws(Corruption) -> [Data] {
        guard !body.isEmpty else { return [] }
        guard body.last == newline else { throw .missingFinalNewline }
        var records = [Data]()
        var failedLine: Int?
        // memchr over the raw bytes: Data.split is a byte-by-byte generic loop, ~10x slower.
        body.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) in
            guard let base = buffer.baseAddress else { return }
            var start = 0
            while start < buffer.count {
                let remaining = buffer.count - start
                let end = memchr(base + start, Int32(newline), remaining)
                    .map { base.distance(to: UnsafeRawPointer($0)) } ?? buffer.count
                let line = Data(bytes: base + start, count: end - start)
                guard let record = Data(base64Encoded: line) else {
                    failedLine = records.count + 1
                    return
                }
                records.append(record)
                start = end + 1
            }
        }
        if let failedLine { throw .invalidBase64(line: failedLine) }
        return records
    }

    private static let newline = UInt8(ascii: "\n")
}
