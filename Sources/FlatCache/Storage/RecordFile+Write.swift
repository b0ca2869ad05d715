import Foundation

extension RecordFile {
    /// A write of one file in steps (stage, synchronize, commit, synchronize
    /// the commit), so that a flush of many files writes them all, then syncs
    /// them together, instead of one full round of `fsync`s per file.
    struct StagedWrite: Sendable {
        enum Kind: Sendable {
            /// The file already holds these bytes: nothing to do.
            case unchanged
            /// Whole new data file and sidecar, waiting in their temporary files.
            case replace(data: String, sidecar: String)
            /// Lines appended to the data file; the sidecar naming them comes at commit.
            case append(sidecar: Data)
        }

        let file: RecordFile
        let kind: Kind
        /// The tail the file has once committed (its stamp is final after ``RecordFile/commit(_:)``).
        var tail: Tail
        /// How many bytes the write puts in the folder (a replace: the new
        /// files' sizes; an append: its lines), for the size limit.
        var bytesWritten = 0
        /// For an append: the data file's stamp before its lines (the append
        /// checked it on the descriptor it wrote through), so that the file
        /// then is known to be the file before and these lines.
        var appendedAfter: FileStamp?
        /// For an append: where it went and what it wrote, as the journal names it.
        var appended: (
            inode: UInt64, generation: UInt64, offset: Int, before: SHA256Digest, bytes: Data, after: SHA256Digest
        )?

        /// What the write did, as a save reports it.
        var outcome: WriteOutcome {
            if case .unchanged = kind { .unchanged } else { .written }
        }
    }

    /// Writes `records` unless the data file and its sidecar already hold
    /// exactly these bytes, as read back from disk: a file damaged in place
    /// (even at the same size, with its sidecar intact) is rewritten, so the
    /// save heals it.
    ///
    /// The data file is replaced first, then the sidecar, each atomically; a
    /// crash between the two leaves a pair that fails its check and reads as
    /// a miss, never as wrong records. Synchronized, both are flushed before
    /// either rename and the folder once after: three `fsync`s, not four.
    func write(_ records: [Data], synchronized: Bool) throws(FlatCacheError) -> WriteOutcome {
        var staged = try stageReplace(records)
        if synchronized {
            do {
                try synchronize(staged)
            } catch {
                discard(staged)
                throw error
            }
        }
        try commit(&staged)
        if synchronized, case .replace = staged.kind { try FileSystem.synchronizeDirectory(at: FileSystem.parent(of: path)) }
        return staged.outcome
    }

    /// Stages a whole-file write of `records`: both new files written to
    /// their temporary files, or nothing when the file already holds them.
    func stageReplace(_ records: [Data]) throws(FlatCacheError) -> StagedWrite {
        let recordsDigest = sealer == nil ? nil : SealedContents.digest(of: records)
        if let recordsDigest, let unchanged = try holdingSealed(records, digest: recordsDigest) { return unchanged }
        if sealer == nil, let unchanged = try holding(records) { return unchanged }
        let body = RecordLines.encode(records, sealer: sealer, fileName: name)
        var hasher = SHA256Hasher()
        hasher.update(body)
        if let recordsDigest, let keyID = sealer?.keyID {
            SealedContents.shared.remember(path, stored: hasher.finalize(), records: recordsDigest, keyID: keyID)
        }
        let sidecar = Sidecar.contents(digest: hasher.finalize(), name: name)
        let data = try FileSystem.writeTemporary(body, for: path, synchronized: false)
        let waiting: String
        do {
            waiting = try FileSystem.writeTemporary(sidecar, for: sidecarPath, synchronized: false)
        } catch {
            try? FileSystem.removeFile(at: data)
            throw error
        }
        // The stamp is taken at commit, when the new file is in place.
        return StagedWrite(
            file: self, kind: .replace(data: data, sidecar: waiting),
            tail: Tail(stamp: placeholderStamp, sidecarStamp: nil, hasher: hasher, lineCount: records.count),
            bytesWritten: body.count + sidecar.count)
    }

    /// Stages an append of `records` after the lines described by `tail`:
    /// writes them at the end of the data file, provided nobody wrote it since
    /// `tail` was taken; `nil` (and nothing written) otherwise.
    ///
    /// Until ``commit(_:)`` writes the sidecar, a reader sees the old file:
    /// its sidecar still names the old bytes, which are a prefix of the new.
    func stageAppend(_ records: [Data], after tail: Tail) throws(FlatCacheError) -> StagedWrite? {
        // Canonical lines never follow appended ones (format 2): such a file takes appended lines.
        guard tail.appendedLines == 0 else { return nil }
        return try stageAppend(body: RecordLines.encode(records, sealer: sealer, fileName: name), lines: records.count, appended: 0, after: tail)
    }

    /// Stages an append of `lines` (format 2: newer versions and deletions)
    /// after the lines described by `tail`, as ``stageAppend(_:after:)`` does.
    func stageAppend(_ lines: [AppendedLine], after tail: Tail) throws(FlatCacheError) -> StagedWrite? {
        try stageAppend(
            body: RecordLines.encode(lines, sealer: sealer, fileName: name), lines: lines.count, appended: lines.count, after: tail)
    }

    private func stageAppend(body: Data, lines: Int, appended: Int, after tail: Tail) throws(FlatCacheError) -> StagedWrite? {
        guard let (stamp, generation) = try FileSystem.append(body, to: path, expecting: tail.stamp) else { return nil }
        var hasher = tail.hasher
        hasher.update(body)
        let sidecar = Sidecar.contents(digest: hasher.finalize(), name: name)
        let grown = Tail(
            stamp: stamp, sidecarStamp: nil, hasher: hasher, lineCount: tail.lineCount + lines,
            appendedLines: tail.appendedLines + appended)
        var staged = StagedWrite(file: self, kind: .append(sidecar: sidecar), tail: grown, bytesWritten: body.count)
        staged.appendedAfter = tail.stamp
        staged.appended = (tail.stamp.inode, generation, tail.stamp.size, tail.hasher.finalize(), body, hasher.finalize())
        return staged
    }

    /// Flushes what ``stageReplace(_:)`` or ``stageAppend(_:after:)`` wrote to the disk.
    func synchronize(_ staged: StagedWrite) throws(FlatCacheError) {
        switch staged.kind {
        case .unchanged: return
        case .replace(let data, let sidecar):
            try FileSystem.synchronizeFile(at: data)
            try FileSystem.synchronizeFile(at: sidecar)
        case .append:
            try FileSystem.synchronizeFile(at: path)
        }
    }

    /// Removes what a staged replace left in temporary files, when it will
    /// not be committed. (An append cannot be taken back: its lines stay,
    /// unconfirmed, until the next read cuts them off.)
    func discard(_ staged: StagedWrite) {
        guard case .replace(let data, let sidecar) = staged.kind else { return }
        try? FileSystem.removeFile(at: data)
        try? FileSystem.removeFile(at: sidecar)
    }

    /// Puts a staged write in place: renames the data file, then the sidecar,
    /// over the old ones; or, for an append, writes the sidecar naming the
    /// longer file over the old one (one write of its single line).
    func commit(_ staged: inout StagedWrite) throws(FlatCacheError) {
        switch staged.kind {
        case .unchanged:
            return
        case .replace(let data, let sidecar):
            do {
                try FileSystem.moveFile(at: data, to: path)
            } catch {
                try? FileSystem.removeFile(at: data)
                try? FileSystem.removeFile(at: sidecar)
                throw error
            }
            do {
                try FileSystem.moveFile(at: sidecar, to: sidecarPath)
            } catch {
                // The save failed: leave no waiting sidecar that would make the new data count.
                try? FileSystem.removeFile(at: sidecar)
                throw error
            }
            guard let stamp = try FileSystem.stamp(at: path) else {
                throw .fileSystem(.rename, path: path, code: .ENOENT)
            }
            staged.tail.stamp = stamp
            staged.tail.sidecarStamp = try FileSystem.stamp(at: sidecarPath)
        case .append(let sidecar):
            staged.tail.sidecarStamp = try FileSystem.overwriteFile(at: sidecarPath, with: sidecar)
        }
    }

    /// Whether the data file's bytes are the lines of `records` and the
    /// sidecar on disk names them; then the write is staged as unchanged.
    /// Comparing the bytes themselves, not the sidecar's digest, is what
    /// proves them: a byte flipped on disk leaves the sidecar and the size as
    /// they were. Each line is encoded and compared in turn, without a body
    /// of its own (``RecordLines/matches(_:_:)``); the digest of the bytes
    /// read, which are then the new content's, checks the sidecar and
    /// continues in the tail for later appends.
    private func holding(_ records: [Data]) throws(FlatCacheError) -> StagedWrite? {
        let size = RecordLines.encodedCount(of: records, sealed: false)
        guard let stamp = try FileSystem.stamp(at: path), stamp.size == size else { return nil }
        do {
            guard let onDisk = try FileSystem.readFile(at: sidecarPath), let read = try FileSystem.readFile(at: path),
                RecordLines.matches(records, read.contents)
            else { return nil }
            var hasher = SHA256Hasher()
            hasher.update(read.contents)
            guard onDisk.contents == Sidecar.contents(digest: hasher.finalize(), name: name) else { return nil }
            let tail = Tail(stamp: read.stamp, sidecarStamp: onDisk.stamp, hasher: hasher, lineCount: records.count)
            return StagedWrite(file: self, kind: .unchanged, tail: tail)
        } catch where FileSystem.isNotARegularFile(error) {
            return nil  // a link or folder where a file belongs: the write deals with it
        }
    }

    /// Whether the sealed data file on disk, whole and named by its sidecar,
    /// holds exactly `records`; then the write is staged as unchanged.
    ///
    /// Sealing twice never gives the same bytes (a fresh nonce per record),
    /// so an encrypted file is compared by what it holds: its size first
    /// (a sealed line's length follows from its record's), then its digest
    /// against the sidecar; then, when this process sealed (or proved) these
    /// very bytes for these records (``SealedContents``), that digest proves
    /// them; else each line is opened (GCM's tag proves it unaltered) and
    /// compared with the record. No digest of the plaintext is kept on disk.
    private func holdingSealed(_ records: [Data], digest: SHA256Digest) throws(FlatCacheError) -> StagedWrite? {
        let size = RecordLines.encodedCount(of: records, sealed: true)
        guard let stamp = try FileSystem.stamp(at: path), stamp.size == size else { return nil }
        do {
            guard let onDisk = try FileSystem.readFile(at: sidecarPath), let read = try FileSystem.readFile(at: path),
                read.contents.count == size
            else { return nil }
            var hasher = SHA256Hasher()
            hasher.update(read.contents)
            let stored = hasher.finalize()
            guard onDisk.contents == Sidecar.contents(digest: stored, name: name) else { return nil }
            guard let keyID = sealer?.keyID else { return nil }
            if !SealedContents.shared.holds(path, stored: stored, records: digest, keyID: keyID) {
                guard let held = try? RecordLines.decode(read.contents, sealer: sealer, fileName: name), held == FileLines(records: records)
                else { return nil }
                SealedContents.shared.remember(path, stored: stored, records: digest, keyID: keyID)
            }
            let tail = Tail(stamp: read.stamp, sidecarStamp: onDisk.stamp, hasher: hasher, lineCount: records.count)
            return StagedWrite(file: self, kind: .unchanged, tail: tail)
        } catch where FileSystem.isNotARegularFile(error) {
            return nil  // a link or folder where a file belongs: the write deals with it
        }
    }

    /// Stands in for a replaced file's stamp until the rename gives the real one.
    private var placeholderStamp: FileStamp { FileStamp(stat()) }
}
