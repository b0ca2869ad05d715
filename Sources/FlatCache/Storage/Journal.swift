import Foundation

/// The folder's write-ahead journal (format 2; docs/format.md, "The journal"):
/// what lets a durable flush (``Durability/synchronized``) that appends to
/// many files wait for one `fsync`, not two per file.
///
/// A flush appends its lines to the data files, then writes one entry here
/// naming each append (the file, its inode, its size and digest before, the
/// bytes, the digest after) and `fsync`s this file once; only then does it
/// write the sidecars. Neither the data files nor the sidecars are synced:
/// after a power cut, the next writable open replays the journal, putting
/// back whatever appends and sidecars the cut lost. A checkpoint, now and
/// then and at close, syncs every file the journal names and empties it.
///
/// Entries are written holding the files' locks and an exclusive `flock` on
/// this file; a checkpoint and a replay hold every lock of the folder, so no
/// write is between its append and its sidecar while they run.
final class Journal: Sendable {
    /// The journal's path: `<root>/journal`.
    let path: String
    /// The cache folder's path, which entries name files relative to.
    let root: String
    /// The size past which a flush checkpoints after writing (see ``needsCheckpoint``).
    let checkpointSize: Int

    init(root: String, checkpointSize: Int = 32 << 20) {
        self.root = root
        path = root + "/journal"
        self.checkpointSize = checkpointSize
    }

    /// One append to a data file, as an entry names it.
    struct Append: Equatable, Sendable {
        /// The data file's path relative to the folder (`messages/<key>.lines`).
        var file: String
        /// Its inode when the append was made: a file replaced since is another file.
        var inode: UInt64
        /// Its generation then (``FileSystem/generation(at:)``; 0 when unknown): a new file that was
        /// given a freed inode's number is another file too.
        var generation: UInt64 = 0
        /// Its size before the append (never 0: an append to an empty file is synced as before).
        var offset: Int
        /// The SHA256 of its bytes before the append.
        var before: SHA256Digest
        /// The appended bytes.
        var bytes: Data
        /// The SHA256 of its bytes after the append: what its sidecar names.
        var after: SHA256Digest
    }

    // MARK: - Writing

    /// Writes one entry for `appends` and `fsync`s the journal: once it
    /// returns, the appends survive a power cut. Call holding the files' locks.
    func record(_ appends: [Append]) throws(FlatCacheError) {
        guard !appends.isEmpty else { return }
        try FileSystem.appendSynchronized(Self.line(for: appends), to: path)
    }

    /// Whether the journal has passed ``checkpointSize``.
    var needsCheckpoint: Bool {
        ((try? FileSystem.stamp(at: path))??.size ?? 0) > checkpointSize
    }

    /// Syncs every file the journal names (data and sidecar), then empties
    /// it. Call holding every lock of the folder.
    func checkpoint() throws(FlatCacheError) {
        guard let data = try FileSystem.contentsOfFile(at: path), !data.isEmpty else { return }
        var synced = Set<String>()
        for entry in Self.entries(in: data) {
            for append in entry where synced.insert(append.file).inserted {
                let file = root + "/" + append.file
                // A file removed or moved aside since has nothing left to sync.
                guard try FileSystem.stamp(at: file) != nil else { continue }
                try FileSystem.synchronizeFile(at: file)
                if try FileSystem.stamp(at: file + ".sha256") != nil { try FileSystem.synchronizeFile(at: file + ".sha256") }
            }
        }
        try FileSystem.truncateFile(at: path, to: 0)
        try FileSystem.synchronizeFile(at: path)
    }

    // MARK: - Replaying

    /// What a replay did.
    struct Replay: Equatable {
        /// Appends whose bytes were missing from their file and written again.
        var appendsRestored = 0
        /// Sidecars written again to name their file's journaled bytes.
        var sidecarsRestored = 0
        /// Appends to files replaced or removed since, left alone.
        var appendsStale = 0
    }

    /// Puts back what a power cut took of the journaled appends, then
    /// checkpoints. Call holding every lock of the folder, before anything
    /// reads the files. The rules (docs/format.md, "The journal"):
    ///
    /// - An append is dead when a later entry names the same file (inode and
    ///   generation) at the same offset or before it: its lines were cut off
    ///   (an append whose flush never finished) before that one was made.
    /// - An append applies to its file only while the file is the one it was
    ///   made to: the same inode and generation, and then either its sidecar
    ///   does not name its bytes (a power cut took the append, or its
    ///   sidecar) and its first `offset` bytes have the digest before, or it
    ///   is whole and exactly as the append found it (offset and digest). A
    ///   whole file that moved on is left alone. A later entry of a file an
    ///   entry applied to applies when it continues from where that left it.
    /// - An applied append's bytes are written at its offset when they differ;
    ///   then each such file whose sidecar does not name its bytes is cut to
    ///   its last applied append and its sidecar written for it.
    /// - A file that cannot be read, or is not a regular file, is skipped: a
    ///   read deals with it as damage.
    @discardableResult
    func replay() throws(FlatCacheError) -> Replay {
        var result = Replay()
        guard let data = try FileSystem.contentsOfFile(at: path), !data.isEmpty else { return result }
        let appends = Self.entries(in: data).flatMap { $0 }
        let live = Self.live(appends)
        // Per file: its identity, and its size and digest once the entries so far are applied.
        var state = [String: (inode: UInt64, generation: UInt64, size: Int, digest: SHA256Digest)]()
        var order = [String]()
        for (index, append) in appends.enumerated() {
            guard live[index] else {
                result.appendsStale += 1
                continue
            }
            let file = root + "/" + append.file
            do throws(FlatCacheError) {
                if let known = state[append.file] {
                    guard known.inode == append.inode, known.generation == append.generation, known.size == append.offset,
                        known.digest == append.before
                    else {
                        result.appendsStale += 1
                        continue
                    }
                } else {
                    guard try Self.applies(append, to: file) else {
                        result.appendsStale += 1
                        continue
                    }
                    order.append(append.file)
                }
                let current = try FileSystem.contentsOfFile(at: file) ?? Data()
                let end = append.offset + append.bytes.count
                if current.count < end || current[append.offset..<end] != append.bytes {
                    try FileSystem.writeFile(append.bytes, at: file, offset: append.offset)
                    result.appendsRestored += 1
                }
                state[append.file] = (append.inode, append.generation, end, append.after)
            } catch {
                result.appendsStale += 1
            }
        }
        for name in order {
            guard let last = state[name] else { continue }
            let file = root + "/" + name
            do throws(FlatCacheError) {
                guard let contents = try FileSystem.contentsOfFile(at: file) else { continue }
                let sidecar = try FileSystem.contentsOfFile(at: file + ".sha256")
                let fileName = FileSystem.name(of: file)
                if sidecar == Sidecar.contents(digest: SHA256Digest(of: contents), name: fileName) { continue }
                guard contents.count >= last.size, SHA256Digest(of: contents.prefix(last.size)) == last.digest else { continue }
                if contents.count > last.size { try FileSystem.truncateFile(at: file, to: last.size) }
                try FileSystem.overwriteFile(at: file + ".sha256", with: Sidecar.contents(digest: last.digest, name: fileName))
                result.sidecarsRestored += 1
            } catch {
                continue
            }
        }
        try checkpoint()
        return result
    }

    /// Which of `appends` (in journal order) are not dead: no later append to the same file starts at or before them.
    static func live(_ appends: [Append]) -> [Bool] {
        var live = [Bool](repeating: true, count: appends.count)
        // Per file, the lowest offset of the appends after the one looked at.
        var lowest = [String: Int]()
        for index in appends.indices.reversed() {
            let append = appends[index]
            let key = "\(append.file)\u{0}\(append.inode)\u{0}\(append.generation)"
            if let later = lowest[key], later <= append.offset { live[index] = false }
            lowest[key] = min(lowest[key] ?? .max, append.offset)
        }
        return live
    }

    /// Whether the first live append of a file applies to the file at `file` as it is now (see ``replay()``).
    private static func applies(_ append: Append, to file: String) throws(FlatCacheError) -> Bool {
        let found: (contents: Data, stamp: FileStamp)?
        do {
            found = try FileSystem.readFile(at: file)
        } catch where FileSystem.isNotARegularFile(error) {
            return false
        }
        guard let found, found.stamp.inode == append.inode,
            append.generation == 0 || FileSystem.generation(at: file) == append.generation,
            found.contents.count >= append.offset
        else { return false }
        let sidecar = try? FileSystem.contentsOfFile(at: file + ".sha256")
        let whole = sidecar == Sidecar.contents(digest: SHA256Digest(of: found.contents), name: FileSystem.name(of: file))
        // A whole file applies only as the append found it: one that moved on took other writes since.
        if whole { return found.contents.count == append.offset && SHA256Digest(of: found.contents) == append.before }
        return SHA256Digest(of: found.contents.prefix(append.offset)) == append.before
    }

    // MARK: - The entry's form

    /// An entry as the journal holds it: `\n`, the Base64 of its bytes and
    /// of their SHA256, `\n`. The leading `\n` ends a line a crash cut short,
    /// so that the entry after it still reads.
    static func line(for appends: [Append]) -> Data {
        var bytes = Data("FCJ1".utf8)
        bytes.appendInteger(UInt32(appends.count))
        for append in appends {
            let name = Data(append.file.utf8)
            bytes.appendInteger(UInt16(name.count))
            bytes.append(name)
            bytes.appendInteger(append.inode)
            bytes.appendInteger(append.generation)
            bytes.appendInteger(UInt64(append.offset))
            bytes.append(contentsOf: append.before.bytes)
            bytes.append(contentsOf: append.after.bytes)
            bytes.appendInteger(UInt32(append.bytes.count))
            bytes.append(append.bytes)
        }
        bytes.append(contentsOf: SHA256Digest(of: bytes).bytes)
        return Data("\n".utf8) + RecordLines.encode([bytes])
    }

    /// The whole entries in a journal's bytes, in order: a line that is cut
    /// short, not Base64, or whose digest does not match is skipped.
    static func entries(in data: Data) -> [[Append]] {
        data.split(separator: UInt8(ascii: "\n")).compactMap { line in
            guard let bytes = try? RecordLines.decode(Data(line) + Data("\n".utf8)).first, bytes.count > 36 else { return nil }
            let body = bytes.prefix(bytes.count - 32)
            guard SHA256Digest(of: body).bytes == Array(bytes.suffix(32)) else { return nil }
            return parse(Data(body))
        }
    }

    private static func parse(_ body: Data) -> [Append]? {
        var reader = ByteReader(body)
        guard reader.take(4) == Data("FCJ1".utf8), let count: UInt32 = reader.integer() else { return nil }
        var appends = [Append]()
        for _ in 0..<count {
            guard let nameCount: UInt16 = reader.integer(), let name = reader.take(Int(nameCount)),
                let file = String(data: name, encoding: .utf8), isDataFile(file), let inode: UInt64 = reader.integer(),
                let generation: UInt64 = reader.integer(), let offset: UInt64 = reader.integer(), offset > 0,
                offset <= UInt64(Int32.max), let before = reader.take(32), let after = reader.take(32),
                let byteCount: UInt32 = reader.integer(), let bytes = reader.take(Int(byteCount))
            else { return nil }
            appends.append(Append(
                file: file, inode: inode, generation: generation, offset: Int(offset), before: SHA256Digest(bytes: Array(before)),
                bytes: bytes, after: SHA256Digest(bytes: Array(after))))
        }
        return reader.isAtEnd ? appends : nil
    }

    /// Whether an entry's path names a file the journal may name: `channels.lines`, `users.lines`, or
    /// `messages/<name>.lines` with no `/` in the name and not hidden (no `..` can lead out of the folder).
    private static func isDataFile(_ path: String) -> Bool {
        if path == "channels.lines" || path == "users.lines" { return true }
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        return parts.count == 2 && parts[0] == "messages" && parts[1].hasSuffix(".lines") && !parts[1].hasPrefix(".")
    }

    /// Reads little-endian integers and byte runs off the front of some bytes.
    private struct ByteReader {
        private let bytes: Data
        private var offset = 0

        init(_ bytes: Data) { self.bytes = Data(bytes) }

        var isAtEnd: Bool { offset == bytes.count }

        mutating func take(_ count: Int) -> Data? {
            guard count >= 0, bytes.count - offset >= count else { return nil }
            defer { offset += count }
            return bytes.subdata(in: offset..<offset + count)
        }

        mutating func integer<T: FixedWidthInteger>() -> T? {
            guard let raw = take(MemoryLayout<T>.size) else { return nil }
            var value = T.zero
            for (index, byte) in raw.enumerated() { value |= T(byte) << (8 * index) }
            return value
        }
    }
}

extension Data {
    /// Appends `value`'s bytes, little-endian.
    fileprivate mutating func appendInteger<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }
}
