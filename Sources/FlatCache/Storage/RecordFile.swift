import Foundation

/// One data file of records, as Base64 lines, and its `.sha256` sidecar.
///
/// Knows nothing of chat: it reads and writes lists of byte strings. A read
/// verifies the data against the sidecar before decoding; a write that would
/// produce the bytes already on disk costs a hash and a read-back, no write.
struct RecordFile: Sendable, Hashable {
    /// The data file's path.
    let path: String

    /// The sidecar's path: the data file's path plus `.sha256` (kept, not
    /// rebuilt: every write `stat`s it).
    let sidecarPath: String

    /// The data file at `path`, and its sidecar beside it.
    ///
    /// - Parameters:
    ///   - attachment: The path of a data file that describes this
    ///     one's content (a channel's continuity), when it has one.
    ///   - sealer: What seals its lines, in an encrypted folder.
    init(path: String, attachment: String? = nil, sealer: Sealer? = nil) {
        self.path = path
        sidecarPath = path + ".sha256"
        name = FileSystem.name(of: path)
        self.attachment = attachment
        self.sealer = sealer
    }

    /// What seals and opens its lines in an encrypted folder; `nil` in a plain one.
    let sealer: Sealer?

    /// A data file (with its own sidecar) that says something about this
    /// one's content, so is true only of it: it is removed before this file
    /// is removed, moved aside or replaced whole, and written only after it.
    let attachment: String?

    /// The data file's name, as its sidecar records it.
    let name: String

    /// What a read found.
    enum Contents: Equatable {
        /// Neither file, or only a sidecar left by an interrupted removal.
        case missing
        /// The verified lines: canonical records, then appended lines (format 2).
        case records(FileLines)
        /// Something that must not be trusted.
        case corrupt(Corruption)
    }

    /// Whether a write replaced the file or found the same bytes already there.
    enum WriteOutcome: Equatable {
        case written
        case unchanged
    }

    /// What FlatCache knows of a data file it just read or wrote, so that it
    /// can tell later, with one `stat`, whether anyone wrote it since, and
    /// append lines without reading it again.
    struct Tail: Sendable {
        /// The data file's stamp.
        var stamp: FileStamp
        /// The sidecar's stamp: a write checks it too, so that damage to the
        /// sidecar alone is noticed before lines are appended under it.
        var sidecarStamp: FileStamp?
        /// SHA256 over every byte of the data file.
        var hasher: SHA256Hasher
        /// Its number of lines: records, and appended lines (format 2).
        var lineCount: Int
        /// How many of them are appended lines (format 2): 0 when the file is canonical.
        var appendedLines = 0
    }

    /// The stamps of the data file and its sidecar: two `lstat`s.
    func stamps() throws(FlatCacheError) -> (data: FileStamp?, sidecar: FileStamp?) {
        (try FileSystem.stamp(at: path), try FileSystem.stamp(at: sidecarPath))
    }

    /// The sidecar's stamp: one `lstat`, what an append checks besides the
    /// data file's stamp, which it takes on the descriptor it writes through.
    func sidecarStamp() throws(FlatCacheError) -> FileStamp? {
        try FileSystem.stamp(at: sidecarPath)
    }

    /// The data file's stamp: one `lstat`, what a memory-tier hit checks.
    /// Every write of the file, by anyone, changes it (an append its size,
    /// a replace its inode, any write its change time); the sidecar alone
    /// changes only by damage, which the next read from disk or write finds.
    func dataStamp() throws(FlatCacheError) -> FileStamp? {
        try FileSystem.stamp(at: path)
    }

    /// Reads the data file and checks it against its sidecar.
    ///
    /// - Parameter finishing: Whether to complete what a crash cut short:
    ///   rename a waiting sidecar into place (a replace, see
    ///   ``finishInterruptedReplace(digest:finishing:)``), or cut off lines an
    ///   append left unconfirmed (see ``recoverUnfinishedAppend(_:recorded:)``);
    ///   `false` for a read-only cache, which reads the whole part and changes nothing.
    /// - Throws: ``FlatCacheError/fileSystem(_:path:code:)`` when a file cannot be read.
    func read(finishing: Bool = true) throws(FlatCacheError) -> Contents {
        try load(finishing: finishing).contents
    }

    /// Reads the data file as ``read(finishing:)`` does, and also returns its
    /// ``Tail`` when its records are whole and on disk exactly as read.
    func load(finishing: Bool = true) throws(FlatCacheError) -> (contents: Contents, tail: Tail?) {
        let (found, tail) = try verify(finishing: finishing)
        switch found {
        case .missing: return (.missing, nil)
        case .corrupt(let problem): return (.corrupt(problem), nil)
        case .body(let body):
            do throws(Corruption) {
                return (.records(try RecordLines.decode(body, sealer: sealer, fileName: name)), tail)
            } catch {
                return (.corrupt(error), nil)
            }
        }
    }

    /// What ``verify(finishing:)`` found.
    enum Verified {
        case missing
        /// The data file's bytes, whose digest the sidecar names (lines not yet decoded).
        case body(Data)
        case corrupt(Corruption)
    }

    /// Reads the data file and checks its digest against the sidecar (and
    /// what a crash may have left, as ``load(finishing:)`` describes), without
    /// decoding its lines: for a read that needs only a few of them.
    ///
    /// A file this process checked before (``VerifiedFiles``) is not hashed
    /// again while its stamp and its sidecar's are those it had then.
    ///
    /// - Parameter withTail: Whether to work out the file's ``Tail`` (a pass
    ///   over the bytes to count its lines), which only a write goes on from;
    ///   a read that decodes a few lines passes `false` and gets none.
    func verify(finishing: Bool = true, withTail: Bool = true) throws(FlatCacheError) -> (found: Verified, tail: Tail?) {
        let (found, tail, _) = try check(finishing: finishing, trustingProofs: true, withTail: withTail)
        return (found, tail)
    }

    /// Reads the data file as ``verify(finishing:)`` does, and also says how
    /// many bytes an unfinished append left after the whole prefix the
    /// sidecar names (0 when none): for `verify`, which reports them.
    ///
    /// - Parameter trustingProofs: Whether a check this process made before
    ///   (``VerifiedFiles``) stands for this one while both files' stamps are
    ///   unchanged; `verify` hashes every file whatever this process knows.
    func check(
        finishing: Bool, trustingProofs: Bool = false, withTail: Bool = true
    ) throws(FlatCacheError) -> (found: Verified, tail: Tail?, unfinishedBytes: Int) {
        var data: Data
        var stamp: FileStamp
        let sidecar: Data?
        var sidecarStamp: FileStamp?
        let started = VerifiedFiles.now()
        do {
            guard let found = try FileSystem.readFile(at: path) else { return (.missing, nil, 0) }
            (data, stamp) = found
            if trustingProofs, let proven = try proven(data, stamp: stamp, withTail: withTail) { return proven }
            let sidecarFile = try FileSystem.readFile(at: sidecarPath)
            (sidecar, sidecarStamp) = (sidecarFile?.contents, sidecarFile?.stamp)
        } catch where FileSystem.isNotARegularFile(error) {
            return (.corrupt(.notARegularFile), nil, 0)
        }
        var hasher = SHA256Hasher()
        hasher.update(data)
        let actual = hasher.finalize()
        let recorded: Result<SHA256Digest, Corruption>
        do throws(Corruption) {
            guard let sidecar else { throw .missingSidecar }
            recorded = .success(try Sidecar.digest(in: sidecar, name: name))
        } catch {
            recorded = .failure(error)
        }
        if case .success(actual) = recorded {
            // What the stamps describe is what was hashed only when the read found the size `stat` gave.
            if let sidecarStamp, data.count == stamp.size {
                let proof = VerifiedFiles.Proof(data: stamp, sidecar: sidecarStamp, hasher: hasher)
                VerifiedFiles.shared.remember(path, proof, checkStarted: started)
            }
            return decoded(data, stamp: withTail ? stamp : nil, sidecarStamp: sidecarStamp, hasher: hasher)
        }
        // A replace cut short names the data exactly in its waiting sidecar: try that first.
        // The data file itself is whole then, so its tail stays known.
        if try finishInterruptedReplace(digest: actual, finishing: finishing) {
            return decoded(
                data, stamp: withTail ? stamp : nil, sidecarStamp: try FileSystem.stamp(at: sidecarPath), hasher: hasher)
        }
        switch recorded {
        case .failure(let problem):
            return (.corrupt(problem), nil, 0)
        case .success(let digest):
            guard let whole = recoverUnfinishedAppend(data, recorded: digest) else {
                return (.corrupt(.digestMismatch(recorded: digest.hex, actual: actual.hex)), nil, 0)
            }
            // Cut the unconfirmed lines off (finishing), or read around them: then the file on
            // disk stays longer than what was read, and its tail is not known.
            var cut: FileStamp?
            if finishing, (try? FileSystem.truncateFile(at: path, to: whole.data.count)) != nil {
                cut = (try? FileSystem.stamp(at: path)) ?? nil
            }
            let found = decoded(whole.data, stamp: cut, sidecarStamp: sidecarStamp, hasher: whole.hasher)
            return (found.found, found.tail, data.count - whole.data.count)
        }
    }

    /// `data` (read with `stamp`) as verified, when this process checked
    /// these very bytes before: the data file's stamp was the proof's when it
    /// was opened and still is after the read (no write in between), and the
    /// sidecar's is the proof's. `nil` when that is not known: then hash.
    private func proven(
        _ data: Data, stamp: FileStamp, withTail: Bool
    ) throws(FlatCacheError) -> (found: Verified, tail: Tail?, unfinishedBytes: Int)? {
        guard let proof = VerifiedFiles.shared.proof(for: path), proof.data == stamp, data.count == stamp.size,
            try FileSystem.stamp(at: sidecarPath) == proof.sidecar, try FileSystem.stamp(at: path) == stamp
        else { return nil }
        return decoded(data, stamp: withTail ? stamp : nil, sidecarStamp: proof.sidecar, hasher: proof.hasher)
    }

    /// `data` as verified, and its tail when its `stamp` on disk is known.
    private func decoded(
        _ data: Data, stamp: FileStamp?, sidecarStamp: FileStamp?, hasher: SHA256Hasher
    ) -> (found: Verified, tail: Tail?, unfinishedBytes: Int) {
        let tail = stamp.map {
            let counts = RecordLines.count(in: data)
            return Tail(stamp: $0, sidecarStamp: sidecarStamp, hasher: hasher, lineCount: counts.lines, appendedLines: counts.appended)
        }
        return (.body(data), tail, 0)
    }

    /// Finds the whole file inside one that a crash cut during an append:
    /// appended lines go to the end of the data file before its sidecar
    /// names the longer file, so a file whose sidecar matches one of its
    /// prefixes that ends a line holds that prefix's records, and the rest is
    /// an append that never finished.
    ///
    /// Costs one pass of SHA256 over the file, only when the whole file did
    /// not match. Call with the file's lock held.
    /// - Returns: The whole prefix and its hash state, or `nil` when no prefix matches.
    func recoverUnfinishedAppend(_ data: Data, recorded: SHA256Digest) -> (data: Data, hasher: SHA256Hasher)? {
        var hasher = SHA256Hasher()
        var start = 0
        let found: Int? = data.withUnsafeBytes { bytes in
            guard let base = bytes.baseAddress else { return nil }
            if hasher.finalize() == recorded { return 0 }  // an append to an empty file
            while start < bytes.count, let newline = memchr(base + start, 0x0A, bytes.count - start) {
                let end = base.distance(to: newline) + 1
                hasher.update(UnsafeRawBufferPointer(rebasing: bytes[start..<end]))
                start = end
                // The whole file was checked already; only a shorter prefix can be the one.
                if end < bytes.count, hasher.finalize() == recorded { return end }
            }
            return nil
        }
        guard let found else { return nil }
        return (data.prefix(found), hasher)
    }

    /// Finishes a replace that a crash cut between the data file's rename and
    /// its sidecar's: the new sidecar then waits, complete, in its temporary
    /// file (both are written before either rename). When that sidecar
    /// matches the data, rename it into place (when `finishing`).
    ///
    /// - Returns: Whether the data is whole. Call with the file's lock held.
    private func finishInterruptedReplace(digest: SHA256Digest, finishing: Bool) throws(FlatCacheError) -> Bool {
        let pending = FileSystem.temporaryPath(for: sidecarPath)
        let contents: Data?
        do {
            contents = try FileSystem.contentsOfFile(at: pending)
        } catch where FileSystem.isNotARegularFile(error) {
            return false
        }
        guard let contents, (try? Sidecar.digest(in: contents, name: name)) == digest else { return false }
        if finishing { try FileSystem.moveFile(at: pending, to: sidecarPath) }
        return true
    }

    /// Removes the attachment, then the data file, then its sidecar; missing
    /// files are fine, and so is a folder planted where one belongs (it goes too).
    func remove() throws(FlatCacheError) {
        try removeAttachment()
        try FileSystem.removeItem(at: path)
        try FileSystem.removeItem(at: sidecarPath)
    }

    /// Removes the attachment and its sidecar, when the file has one: what
    /// it said of this file's content is no longer known to be true.
    func removeAttachment() throws(FlatCacheError) {
        guard let attachment else { return }
        try FileSystem.removeItem(at: attachment)
        try FileSystem.removeItem(at: attachment + ".sha256")
    }
}
