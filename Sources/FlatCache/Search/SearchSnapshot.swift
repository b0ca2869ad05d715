import Foundation

/// The search index as saved in `search.lines`, so that the next launch
/// reads it instead of reading and tokenizing every message again.
///
/// It is derived data: a snapshot that is missing, damaged, of another
/// version or another key type is passed over, and the index is built
/// again from the messages. Each message file's entry keeps the file's
/// stamp when it was indexed; a file whose stamp differs at the next open
/// (written since, by this process or another) is indexed again. The layout
/// is in docs/format.md ("The search index").
///
/// Records (one line each, sealed in an encrypted cache like every line):
/// - `0`: the header: the snapshot version, the tokenizer's version, the key type;
/// - `1`: message files, with their stamps;
/// - `2`: the index's channels, senders and documents (with their fingerprints);
/// - `3`: terms and their postings, about 64 KB of them a record.
struct SearchSnapshot<Key: Hashable & Comparable & Sendable>: Sendable {
    /// What the index holds of one message file.
    struct File: Sendable {
        /// The channel's URL, once a message of it was seen.
        var channelURL: String?
        /// The data file's stamp when it was indexed; `nil` when unknown (changes were waiting in memory).
        var stamp: FileStamp?
    }

    /// The message files indexed, by name (`<key>.lines`).
    var files: [String: File]
    /// The index.
    var index: SearchIndex<Key>.Stored

    /// A snapshot of `index`, which holds what `files` say.
    init(files: [String: File], index: SearchIndex<Key>.Stored) {
        self.files = files
        self.index = index
    }

    /// The format of the records; another is passed over.
    static var version: UInt64 { 2 }
    /// The tokenizer's rules: a change to how text becomes terms makes every snapshot old.
    static var tokenizerVersion: UInt64 { 1 }
    /// How many bytes of terms a record holds, at most about: records reveal little of single terms.
    static var termBytesPerRecord: Int { 65_536 }

    /// How keys are written: 1 for `Int64`, 2 for `String`; `nil` for another type (not saved).
    static var keyKind: UInt64? {
        if Key.self == Int64.self { return 1 }
        if Key.self == String.self { return 2 }
        return nil
    }

    // MARK: - Writing

    /// The snapshot's records; `nil` for a key type that cannot be saved.
    func records() -> [SearchSnapshotRecord]? {
        guard let keyKind = Self.keyKind else { return nil }
        var records = [SearchSnapshotRecord]()
        var header = SnapshotWriter()
        header.byte(0)
        for value in [Self.version, Self.tokenizerVersion, keyKind] { header.unsigned(value) }
        records.append(SearchSnapshotRecord(header))

        var files = SnapshotWriter()
        files.byte(1)
        files.count(self.files.count)
        for (name, file) in self.files.sorted(by: { $0.key < $1.key }) {
            files.string(name)
            files.string(file.channelURL ?? "")
            if let stamp = file.stamp {
                files.byte(1)
                for value in [stamp.device, stamp.inode, UInt64(stamp.size)] { files.unsigned(value) }
                for time in [stamp.modified, stamp.changed] {
                    files.signed(Int64(time.seconds))
                    files.signed(Int64(time.nanoseconds))
                }
            } else {
                files.byte(0)
            }
        }
        records.append(SearchSnapshotRecord(files))

        var documents = SnapshotWriter()
        documents.byte(2)
        documents.count(index.channels.count)
        for channel in index.channels { documents.string(channel) }
        documents.count(index.senders.count)
        for sender in index.senders { documents.string(sender) }
        documents.count(index.documents.count)
        // Channels, keys and times as steps from the document before: neighbours are mostly one
        // channel's messages in order, so each takes a byte or two.
        var previous = Neighbour()
        // Each document read in place, its key by the kind found above: in generic code an
        // iterator copies each document, and `as?` casts each key at run time.
        index.documents.withUnsafeBufferPointer { stored in
            for number in stored.indices {
                documents.signed(Int64(stored[number].channel) &- Int64(previous.channel))
                if keyKind == 1 {
                    let key = unsafeBitCast(stored[number].key, to: Int64.self)
                    documents.signed(key &- previous.key)
                    previous.key = key
                } else {
                    documents.string(unsafeBitCast(stored[number].key, to: String.self))
                }
                documents.unsigned(UInt64(stored[number].sender))
                documents.signed(index.createdAt[number] &- previous.createdAt)
                documents.unsigned(UInt64(index.lengths[number]))
                documents.fixed64(stored[number].fingerprint)
                (previous.channel, previous.createdAt) = (stored[number].channel, index.createdAt[number])
            }
        }
        records.append(SearchSnapshotRecord(documents))

        var terms = SnapshotWriter()
        var inRecord = 0
        func close() {
            var record = SnapshotWriter()
            record.byte(3)
            record.count(inRecord)
            records.append(SearchSnapshotRecord(record.bytes + terms.bytes))
            (terms, inRecord) = (SnapshotWriter(), 0)
        }
        for (term, postings) in zip(index.terms, index.postings) {
            terms.string(term)
            terms.run(postings.bytes)
            inRecord += 1
            if terms.bytes.count >= Self.termBytesPerRecord { close() }
        }
        if inRecord > 0 { close() }
        return records
    }

    /// What the document before had, that each document is written as a step from (all 0 before the first).
    private struct Neighbour {
        var channel: Int32 = 0
        var key: Int64 = 0
        var createdAt: Int64 = 0
    }

    // MARK: - Reading

    /// The snapshot `records` hold; `nil` when they are not one this version writes for this key type
    /// (another version, another key type, or damaged beyond what the sidecar catches).
    init?(records: [SearchSnapshotRecord]) {
        guard let keyKind = Self.keyKind else { return nil }
        do throws(SnapshotReader.Malformed) {
            var files: [String: File]?
            var channels = [String]()
            var senders = [String]()
            var documents = [SearchIndex<Key>.Document]()
            var createdAt = [Int64]()
            var lengths = [Int32]()
            var terms = [String]()
            var postingBytes = [[UInt8]]()
            var header = false
            var seen = Set<UInt8>()
            for (position, record) in records.enumerated() {
                var reader = SnapshotReader(Array(record.bytes))
                let kind = try reader.byte()
                // The header first; the files and the documents once each; terms as many times as it takes.
                guard (kind == 0) == (position == 0), kind == 3 || seen.insert(kind).inserted else { return nil }
                switch kind {
                case 0:
                    guard try reader.unsigned() == Self.version, try reader.unsigned() == Self.tokenizerVersion,
                        try reader.unsigned() == keyKind
                    else { return nil }
                    header = true
                case 1:
                    files = try Self.readFiles(&reader)
                case 2:
                    for _ in 0..<(try reader.count()) { channels.append(try reader.string()) }
                    for _ in 0..<(try reader.count()) { senders.append(try reader.string()) }
                    var previous = Neighbour()
                    for _ in 0..<(try reader.count()) {
                        guard let channel = Int32(exactly: Int64(previous.channel) &+ (try reader.signed())) else {
                            throw SnapshotReader.Malformed()
                        }
                        let key: Key
                        if keyKind == 1 {
                            previous.key = previous.key &+ (try reader.signed())
                            key = unsafeBitCast(previous.key, to: Key.self)
                        } else {
                            key = unsafeBitCast(try reader.string(), to: Key.self)
                        }
                        guard let sender = Int32(exactly: try reader.unsigned()) else { throw SnapshotReader.Malformed() }
                        previous.createdAt = previous.createdAt &+ (try reader.signed())
                        guard let length = Int32(exactly: try reader.unsigned()) else { throw SnapshotReader.Malformed() }
                        let fingerprint = try reader.fixed64()
                        previous.channel = channel
                        documents.append(
                            SearchIndex<Key>.Document(channel: channel, key: key, sender: sender, fingerprint: fingerprint))
                        createdAt.append(previous.createdAt)
                        lengths.append(length)
                    }
                case 3:
                    for _ in 0..<(try reader.count()) {
                        terms.append(try reader.string())
                        postingBytes.append(try reader.run())
                    }
                default:
                    return nil
                }
                guard reader.isAtEnd else { return nil }
            }
            guard header, let files else { return nil }
            var postings = [SearchPostings]()
            postings.reserveCapacity(postingBytes.count)
            for bytes in postingBytes {
                guard let list = SearchPostings(bytes: bytes, lengths: lengths) else { return nil }
                postings.append(list)
            }
            self.files = files
            index = SearchIndex<Key>.Stored(
                channels: channels, senders: senders, documents: documents, createdAt: createdAt, lengths: lengths, terms: terms, postings: postings)
        } catch {
            return nil
        }
    }

    private static func readFiles(_ reader: inout SnapshotReader) throws(SnapshotReader.Malformed) -> [String: File] {
        var files = [String: File]()
        for _ in 0..<(try reader.count()) {
            let name = try reader.string()
            let channelURL = try reader.string()
            var stamp: FileStamp?
            if try reader.byte() == 1 {
                let (device, inode, size) = (try reader.unsigned(), try reader.unsigned(), try reader.unsigned())
                var times = [FileStamp.Timestamp]()
                for _ in 0..<2 {
                    times.append(FileStamp.Timestamp(seconds: Int(try reader.signed()), nanoseconds: Int(try reader.signed())))
                }
                guard let size = Int(exactly: size) else { throw SnapshotReader.Malformed() }
                stamp = FileStamp(device: device, inode: inode, size: size, modified: times[0], changed: times[1])
            }
            guard files.updateValue(File(channelURL: channelURL.isEmpty ? nil : channelURL, stamp: stamp), forKey: name) == nil
            else { throw SnapshotReader.Malformed() }
        }
        return files
    }
}

/// One line of `search.lines`: bytes whose first says what the rest is (see ``SearchSnapshot``).
struct SearchSnapshotRecord: CacheRecord {
    let bytes: Data

    init(_ writer: SnapshotWriter) { bytes = Data(writer.bytes) }
    init(_ bytes: [UInt8]) { self.bytes = Data(bytes) }
    init(serializedData: Data) { bytes = serializedData }
    func serialize() -> Data { bytes }
    static var recordTypeName: String { "FlatCache.SearchSnapshot" }
}

/// A stable 64-bit fingerprint (FNV-1a) of a message's searchable fields: equal fields, equal
/// fingerprints, in every process (Swift's `Hasher` is seeded anew in each). Not a digest of any
/// security: it only tells whether a message changed since it was indexed.
enum SearchFingerprint {
    static func of(text: String, sender: String, createdAt: Int64) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func add(_ byte: UInt8) {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        for byte in text.utf8 { add(byte) }
        add(0xFF)  // never in UTF-8: the text ends here
        for byte in sender.utf8 { add(byte) }
        add(0xFF)
        for shift in stride(from: 0, to: 64, by: 8) { add(UInt8(truncatingIfNeeded: createdAt >> Int64(shift))) }
        return hash
    }
}
