import Foundation

/// One data file of records, as Base64 lines, and its `.sha256` sidecar.
///
/// Knows nothing of chat: it reads and writes lists of byte strings. A read
/// verifies the data against the sidecar before decoding; a write that would
/// produce the bytes already on disk costs a hash and a read-back, no write.
struct RecordFile: Sendable, Hashable {
    /// The data file's path.
    let path: String

    /// The sidecar's path: the data file's path plus `.sha256`.
    var sidecarPath: String { path + ".sha256" }

    /// The data file's name, as its sidecar records it.
    var name: String { FileSystem.name(of: path) }

    /// What a read found.
    enum Contents: Equatable {
        /// Neither file, or only a sidecar left by an interrupted removal.
        case missing
        /// The verified records, in file order.
        case records([Data])
        /// Something that must not be trusted.
        case corrupt(Corruption)
    }

    /// Whether a write replaced the file or found the same bytes already there.
    enum WriteOutcome: Equatable {
        case written
        case unchanged
    }

    /// Reads the data file and checks it against its sidecar.
    ///
    /// - Parameter finishing: Whether to rename a waiting sidecar into place
    ///   when a crash cut a replace short (``finishInterruptedReplace(digest:finishing:)``);
    ///   `false` for a read-only cache, which reads such a pair without renaming.
    /// - Throws: ``FlatCacheError/fileSystem(_:path:code:)`` when a file cannot be read.
    func read(finishing: Bool = true) throws(FlatCacheError) -> Contents {
        let data: Data
        let sidecar: Data?
        do {
            guard let found = try FileSystem.contentsOfFile(at: path) else { return .missing }
            data = found
            sidecar = try FileSystem.contentsOfFile(at: sidecarPath)
        } catch where FileSystem.isNotARegularFile(error) {
            return .corrupt(.notARegularFile)
        }
        let actual = SHA256Digest(of: data)
        do throws(Corruption) {
            guard let sidecar else { throw .missingSidecar }
            let recorded = try Sidecar.digest(in: sidecar, name: name)
            guard recorded == actual else {
                throw .digestMismatch(recorded: recorded.hex, actual: actual.hex)
            }
        } catch {
            guard try finishInterruptedReplace(digest: actual, finishing: finishing) else { return .corrupt(error) }
        }
        do throws(Corruption) {
            return .records(try RecordLines.decode(data))
        } catch {
            return .corrupt(error)
        }
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
        let body = RecordLines.encode(records)
        let sidecar = Sidecar.contents(digest: SHA256Digest(of: body), name: name)
        if try isHolding(body: body, sidecar: sidecar) { return .unchanged }
        try FileSystem.replaceFiles([(path, body), (sidecarPath, sidecar)], synchronized: synchronized)
        return .written
    }

    /// Removes the data file, then its sidecar; missing files are fine, and
    /// so is a folder planted where one belongs (it goes too).
    func remove() throws(FlatCacheError) {
        try FileSystem.removeItem(at: path)
        try FileSystem.removeItem(at: sidecarPath)
    }

    /// Whether the sidecar on disk is `sidecar` and the data file's bytes are
    /// `body`. Comparing the bytes themselves, not the sidecar's digest, is what
    /// proves them: a byte flipped on disk leaves the sidecar and the size as
    /// they were. Reading from the page cache and `memcmp` cost a fraction of
    /// the SHA256 the new content already needed.
    private func isHolding(body: Data, sidecar: Data) throws(FlatCacheError) -> Bool {
        guard try FileSystem.entry(at: path) == .file(size: body.count) else { return false }
        do {
            guard try FileSystem.contentsOfFile(at: sidecarPath) == sidecar else { return false }
            return try FileSystem.contentsOfFile(at: path) == body
        } catch where FileSystem.isNotARegularFile(error) {
            return false  // a link or folder where a file belongs: the write deals with it
        }
    }
}
