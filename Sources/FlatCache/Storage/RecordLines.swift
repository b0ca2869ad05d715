import Foundation

/// The data-file body: each record's bytes in standard Base64 (RFC 4648,
/// padded, unwrapped) followed by one `\n`; in an encrypted folder, each
/// record sealed first (see ``Sealer``).
enum RecordLines {
    /// The file body for `records` of the data file `name`, sealed by `sealer` when there is one.
    static func encode(_ records: [Data], sealer: Sealer?, fileName name: String) -> Data {
        guard let sealer else { return encode(records) }
        let (sealed, ranges) = sealer.seal(records, fileName: name)
        return encode(ranges.map { sealed[$0] })
    }

    /// The number of bytes ``encode(_:sealer:fileName:)`` makes of `records`, without making them.
    static func encodedCount(of records: [Data], sealed: Bool) -> Int {
        records.reduce(0) { $0 + Base64.encodedCount(of: sealed ? Sealer.sealedCount(of: $1.count) : $1.count) + 1 }
    }

    /// The lines in the body of the data file `name`, opened by `sealer` when
    /// there is one: its canonical records, then its appended lines (format 2).
    ///
    /// - Throws: As ``decode(_:)``, ``Corruption/unsealable(line:)`` and
    ///   ``Corruption/canonicalLineAfterAppended(line:)``.
    static func decode(_ body: Data, sealer: Sealer?, fileName name: String) throws(Corruption) -> FileLines {
        var (lines, split) = try decodeCanonical(body, stoppingAtAppended: true)
        if let sealer { lines = try sealer.open(lines, fileName: name) }
        guard split < body.count else { return FileLines(records: lines) }
        let appended = try decodeAppended(
            Data(body[(body.startIndex + split)...]), sealer: sealer, fileName: name, firstLine: lines.count + 1)
        return FileLines(records: lines, appended: appended)
    }

    /// The record of the line at `range` of `body`, line `number` (from 1), opened by `opener` when the file is sealed.
    static func decodeLine(
        _ body: Data, in range: Range<Int>, number: Int, opener: Sealer.LineOpener?
    ) throws(Corruption) -> Data {
        guard let opener else { return try decodeLine(body, in: range, number: number) }
        return try opener.record(inLine: range, of: body, number: number)
    }

    /// The file body for `records`, built in one buffer of the exact size
    /// (not zeroed first: every byte is written).
    static func encode(_ records: [Data]) -> Data {
        let size = records.reduce(0) { $0 + Base64.encodedCount(of: $1.count) + 1 }
        // + 1: the encoder's terminating NUL after the last line.
        let base = UnsafeMutablePointer<UInt8>.allocate(capacity: size + 1)
        var offset = 0
        for record in records {
            offset += record.withUnsafeBytes { Base64.encode($0, into: base + offset) }
            base[offset] = newline
            offset += 1
        }
        return Data(bytesNoCopy: base, count: size, deallocator: .custom { pointer, _ in pointer.deallocate() })
    }

    /// Whether `body` is exactly the file body for `records`, as
    /// ``encode(_:)`` would make it: each line encoded in turn into a small
    /// buffer and compared, so that a file found unchanged costs no body of
    /// its own (and one that differs, only the lines up to the difference).
    static func matches(_ records: [Data], _ body: Data) -> Bool {
        let longest = records.reduce(0) { max($0, $1.count) }
        let line = UnsafeMutablePointer<UInt8>.allocate(capacity: Base64.encodedCount(of: longest) + 1)  // + 1: the NUL
        defer { line.deallocate() }
        return body.withUnsafeBytes { file in
            var offset = 0
            for record in records {
                let count = record.withUnsafeBytes { Base64.encode($0, into: line) }
                guard count < file.count - offset, file[offset + count] == newline,
                    count == 0 || memcmp(file.baseAddress! + offset, line, count) == 0
                else { return false }
                offset += count + 1
            }
            return offset == file.count
        }
    }

    /// The records in a file body, in file order: slices of one buffer, no copy each.
    ///
    /// - Throws: ``Corruption/missingFinalNewline`` or ``Corruption/invalidBase64(line:)``.
    static func decode(_ body: Data) throws(Corruption) -> [Data] {
        try decodeCanonical(body, stoppingAtAppended: false).records
    }

    /// The records of the canonical lines at the start of `body`, and where
    /// they end: at the first appended line (format 2) when `stoppingAtAppended`,
    /// else at the end (an appended line is then not Base64, and throws).
    static func decodeCanonical(
        _ body: Data, stoppingAtAppended: Bool
    ) throws(Corruption) -> (records: [Data], end: Int) {
        guard !body.isEmpty else { return ([], 0) }
        guard body.last == newline else { throw .missingFinalNewline }
        var stoppedAt: Int?
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
                    if stoppingAtAppended, AppendedLine.Kind(firstByte: base.load(fromByteOffset: start, as: UInt8.self)) != nil {
                        stoppedAt = start
                        return
                    }
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
        return (ranges.map { decoded[$0] }, stoppedAt ?? body.count)
    }

    /// How many lines `body` holds (its `\n`s), and how many of them are appended lines (format 2).
    static func count(in body: Data) -> (lines: Int, appended: Int) {
        body.withUnsafeBytes { bytes in
            guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return (0, 0) }
            var (count, appended, start) = (0, 0, 0)
            while start < bytes.count, let found = memchr(base + start, Int32(newline), bytes.count - start) {
                count += 1
                if AppendedLine.Kind(firstByte: base[start]) != nil { appended += 1 }
                start = UnsafeRawPointer(base).distance(to: found) + 1
            }
            return (count, appended)
        }
    }

    /// Where each line of `body` lies (without its `\n`), for decoding a few
    /// of them (``decodeLine(_:in:number:)``) instead of all.
    ///
    /// - Throws: ``Corruption/missingFinalNewline``.
    static func lineRanges(_ body: Data) throws(Corruption) -> [Range<Int>] {
        guard !body.isEmpty else { return [] }
        guard body.last == newline else { throw .missingFinalNewline }
        return body.withUnsafeBytes { bytes in
            let base = bytes.baseAddress!
            var ranges = [Range<Int>]()
            var start = 0
            while start < bytes.count {
                let end = base.distance(to: memchr(base + start, Int32(newline), bytes.count - start)!)
                ranges.append(start..<end)
                start = end + 1
            }
            return ranges
        }
    }

    /// The record bytes of the line at `range` of `body`, line `number` (from 1).
    ///
    /// - Throws: ``Corruption/invalidBase64(line:)``.
    static func decodeLine(_ body: Data, in range: Range<Int>, number: Int) throws(Corruption) -> Data {
        // Not zeroed first, and not resized after: the decoder writes every byte it counts.
        let capacity = Base64.maximumDecodedCount(of: range.count) + 3
        let output = malloc(max(capacity, 1))!.assumingMemoryBound(to: UInt8.self)
        let count = body.withUnsafeBytes { input in
            Base64.decode(UnsafeRawBufferPointer(rebasing: input[range]), into: output)
        }
        guard let count else {
            free(output)
            throw .invalidBase64(line: number)
        }
        return Data(bytesNoCopy: output, count: count, deallocator: .free)
    }

    /// The byte that ends every line.
    static let newline = UInt8(ascii: "\n")
}
