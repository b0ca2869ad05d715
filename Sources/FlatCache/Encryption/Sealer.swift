import Foundation

/// Seals and opens the records of an encrypted folder (format 1, sealed
/// lines; docs/format.md, "Encryption"), and names its message files.
///
/// A record's line is Base64 of `nonce ‖ ciphertext ‖ tag`: AES-256-GCM under
/// the key, a fresh 12-byte nonce, and as associated data `flatcache 1 ` then
/// the data file's name (`channels.lines`, `<key>.lines`, `<key>.continuity`):
/// a line moved into another file does not open there. The line's position
/// is not part of it, so appends and compaction keep lines as they are.
struct Sealer: Sendable, Hashable {
    /// The key's 32 bytes.
    let key: [UInt8]
    /// ``Encryption/keyID``.
    let keyID: String
    /// Where nonces come from: random, or a counter for golden files in tests.
    let nonces: NonceSource

    /// Where a sealed record's nonce comes from.
    enum NonceSource: Sendable, Hashable {
        /// 12 bytes from the system's secure generator per record.
        case random
        /// For tests only: nonce `n` is the 12-byte big-endian `n`, from
        /// `start` on, shared by every sealer made from the same source.
        case counter(NonceCounter)
    }

    /// A sealer for `encryption`'s key.
    ///
    /// - Throws: ``FlatCacheError/invalidEncryptionKey(byteCount:)`` unless the key is 32 bytes.
    init(_ encryption: Encryption, nonces: NonceSource = .random) throws(FlatCacheError) {
        let key = Array(encryption.key)
        guard key.count == 32 else { throw .invalidEncryptionKey(byteCount: key.count) }
        self.key = key
        keyID = Self.keyID(of: key)
        self.nonces = nonces
    }

    /// The id of `key`: the first 8 bytes of HMAC-SHA256(key, "flatcache key id"), lowercase hex.
    static func keyID(of key: [UInt8]) -> String {
        SHA256Digest(bytes: HMACSHA256.code(key: key, message: Data("flatcache key id".utf8))).hex.prefix(16).lowercased()
    }

    /// The message file key of `channelURL`: lowercase hex HMAC-SHA256(key, the URL's UTF-8).
    func fileKey(forChannel channelURL: String) -> String {
        SHA256Digest(bytes: HMACSHA256.code(key: key, message: Data(channelURL.utf8))).hex
    }

    /// The associated data of every line in the data file `name`.
    static func associatedData(fileName name: String) -> [UInt8] {
        Array("flatcache 1 \(name)".utf8)
    }

    /// The associated data of a line of the data file `name` appended after
    /// its canonical lines (format 2): `flatcache 2 `, the line's kind byte
    /// (`*` or `-`), a space, the name. A line whose kind byte was changed
    /// does not open: an edit cannot be turned into a deletion, nor back.
    static func associatedData(fileName name: String, appended kind: AppendedLine.Kind) -> [UInt8] {
        Array("flatcache 2 ".utf8) + [kind.rawValue, UInt8(ascii: " ")] + Array(name.utf8)
    }

    /// The sealed size of a record of `count` bytes.
    static func sealedCount(of count: Int) -> Int { count + AESGCM.overhead }

    /// Each record sealed for the data file `name`, in one buffer: the
    /// ranges of the sealed records in it.
    func seal(_ records: [Data], fileName name: String) -> (bytes: Data, ranges: [Range<Int>]) {
        seal(records, associatedData: Self.associatedData(fileName: name))
    }

    /// Each record sealed with `associated` as its associated data, in one buffer (see ``seal(_:fileName:)``).
    func seal(_ records: [Data], associatedData associated: [UInt8]) -> (bytes: Data, ranges: [Range<Int>]) {
        let total = records.reduce(0) { $0 + Self.sealedCount(of: $1.count) }
        var sealed = Data(count: total)
        var ranges = [Range<Int>]()
        ranges.reserveCapacity(records.count)
        var nonces = [UInt8](repeating: 0, count: records.count * AESGCM.nonceCount)
        nonces.withUnsafeMutableBytes { fill($0, count: records.count) }
        let cipher = AESGCM(key: key)
        sealed.withUnsafeMutableBytes { output in
            nonces.withUnsafeBytes { nonceBytes in
                associated.withUnsafeBytes { associatedBytes in
                    var offset = 0
                    for (index, record) in records.enumerated() {
                        let nonce = UnsafeRawBufferPointer(rebasing: nonceBytes[index * AESGCM.nonceCount..<(index + 1) * AESGCM.nonceCount])
                        record.withUnsafeBytes {
                            cipher.seal($0, nonce: nonce, associatedData: associatedBytes, into: output.baseAddress! + offset)
                        }
                        ranges.append(offset..<offset + Self.sealedCount(of: record.count))
                        offset += Self.sealedCount(of: record.count)
                    }
                }
            }
        }
        return (sealed, ranges)
    }

    /// The records inside `lines` (each a sealed record) of the data file `name`.
    ///
    /// - Throws: ``Corruption/unsealable(line:)`` for the first line that does
    ///   not open: a line moved from another file, a changed byte, another key.
    func open(_ lines: [Data], fileName name: String, firstLine: Int = 1) throws(Corruption) -> [Data] {
        let total = lines.reduce(0) { $0 + max(0, $1.count - AESGCM.overhead) }
        // One spare byte: a buffer of no bytes may have no address to write at.
        var plain = Data(count: total + 1)
        var ranges = [Range<Int>]()
        ranges.reserveCapacity(lines.count)
        let cipher = AESGCM(key: key)
        let associated = Self.associatedData(fileName: name)
        var failed: Int?
        plain.withUnsafeMutableBytes { output in
            associated.withUnsafeBytes { associatedBytes in
                var offset = 0
                let base = output.baseAddress!
                for (index, line) in lines.enumerated() {
                    let opened = line.withUnsafeBytes { cipher.open($0, associatedData: associatedBytes, into: base + offset) }
                    guard opened else {
                        failed = firstLine + index
                        return
                    }
                    let count = line.count - AESGCM.overhead
                    ranges.append(offset..<offset + count)
                    offset += count
                }
            }
        }
        if let failed { throw .unsealable(line: failed) }
        return ranges.map { plain[$0] }
    }

    private func fill(_ buffer: UnsafeMutableRawBufferPointer, count: Int) {
        switch nonces {
        case .random:
            SecureRandom.fill(buffer)
        case .counter(let counter):
            for index in 0..<count {
                let value = counter.next()
                for byte in 0..<8 {
                    buffer[index * AESGCM.nonceCount + 4 + byte] = UInt8(truncatingIfNeeded: value >> (8 * (7 - byte)))
                }
            }
        }
    }
}

/// Counts nonces for golden files (``Sealer/NonceSource/counter(_:)``): never in an app.
final class NonceCounter: @unchecked Sendable, Hashable {
    // Lock rule (docs/reliability.md, "Liveness"): held only to read or change the fields it guards;
    // nothing is resumed, yielded or called out while it is held.
    private let lock = NSLock()
    private var value: UInt64  // guarded by `lock`

    /// A counter whose first nonce is `start`.
    init(start: UInt64 = 1) { value = start }

    /// The next nonce's number.
    func next() -> UInt64 {
        lock.withLock {
            defer { value += 1 }
            return value
        }
    }

    static func == (lhs: NonceCounter, rhs: NonceCounter) -> Bool { lhs === rhs }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
