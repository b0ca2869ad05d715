import Foundation

/// What this process last sealed into (or proved held by) each encrypted
/// data file: the SHA256 of the file's bytes and a digest of the records
/// inside. Kept in memory only, never on disk.
///
/// Sealing twice never gives the same bytes, so "is this file already these
/// records?" would cost opening every line. When the file's bytes still hash
/// to what was sealed for the same records, they are proven the same
/// without opening any (SHA256 names the bytes; the bytes were these
/// records when sealed). Holds a few thousand files; past that it starts again.
final class SealedContents: @unchecked Sendable {
    /// The one table of the process: every cache on every folder shares it, by path.
    static let shared = SealedContents()

    private struct Entry: Equatable {
        var stored: SHA256Digest
        var records: SHA256Digest
        /// The key that sealed them: the same records under another key must be sealed again.
        var keyID: String
    }

    // Lock rule (docs/reliability.md, "Liveness"): held only to read or change the fields it guards;
    // nothing is resumed, yielded or called out while it is held.
    private let lock = NSLock()
    private var entries = [String: Entry]()  // guarded by `lock`

    /// The digest of `records` as a list: each record's length (8 bytes, big-endian) and bytes.
    static func digest(of records: [Data]) -> SHA256Digest {
        var hasher = SHA256Hasher()
        for record in records {
            withUnsafeBytes(of: UInt64(record.count).bigEndian) { hasher.update($0) }
            hasher.update(record)
        }
        return hasher.finalize()
    }

    /// Remembers that the file at `path`, whose bytes have the SHA256 `stored`,
    /// holds the records of digest `records` sealed under the key `keyID`.
    func remember(_ path: String, stored: SHA256Digest, records: SHA256Digest, keyID: String) {
        lock.withLock {
            if entries.count >= 4_096 { entries.removeAll(keepingCapacity: true) }
            entries[path] = Entry(stored: stored, records: records, keyID: keyID)
        }
    }

    /// Whether the file at `path`, whose bytes have the SHA256 `stored`, is
    /// known to hold the records of digest `records` sealed under the key `keyID`.
    func holds(_ path: String, stored: SHA256Digest, records: SHA256Digest, keyID: String) -> Bool {
        lock.withLock { entries[path] == Entry(stored: stored, records: records, keyID: keyID) }
    }
}

