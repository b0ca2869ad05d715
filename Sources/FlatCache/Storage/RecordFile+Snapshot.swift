import Foundation

extension RecordFile {
    /// The data file's and its sidecar's bytes as read together (holding the
    /// file's lock), kept unchecked and undecoded: what a replace waiting for
    /// write-behind needs of the file it replaces only when another writer
    /// changes the file before the write (see ``Change/base``), which is rare.
    /// Reading costs a copy from the page cache; hashing and decoding wait.
    struct Snapshot: Sendable {
        /// The stamps of the data file and its sidecar as read (data `nil`: no file).
        let stamps: (data: FileStamp?, sidecar: FileStamp?)
        /// The data file's bytes; `nil` when there is none or it is not a regular file.
        let data: Data?
        /// The sidecar's bytes; `nil` when there is none or it is not a regular file.
        let sidecar: Data?
    }

    /// Reads the data file and its sidecar without checking them. Call holding its lock.
    func snapshot() throws(FlatCacheError) -> Snapshot {
        do {
            let found = try FileSystem.readFile(at: path)
            let sidecarFile = found == nil ? nil : try FileSystem.readFile(at: sidecarPath)
            return Snapshot(stamps: (found?.stamp, sidecarFile?.stamp), data: found?.contents, sidecar: sidecarFile?.contents)
        } catch where FileSystem.isNotARegularFile(error) {
            // A link or folder where a file belongs holds no records; its stamps still tell a change.
            return Snapshot(stamps: try stamps(), data: nil, sidecar: nil)
        }
    }

    /// The lines `snapshot` held, checked against its sidecar as a read
    /// checks them (an append a crash cut short is read around); `nil` when
    /// there was no file or it could not be trusted. Changes nothing on disk.
    func lines(in snapshot: Snapshot) -> FileLines? {
        guard let data = snapshot.data, let sidecar = snapshot.sidecar,
            let recorded = try? Sidecar.digest(in: sidecar, name: name)
        else { return nil }
        var hasher = SHA256Hasher()
        hasher.update(data)
        var body = data
        if hasher.finalize() != recorded {
            guard let whole = recoverUnfinishedAppend(data, recorded: recorded) else { return nil }
            body = whole.data
        }
        return try? RecordLines.decode(body, sealer: sealer, fileName: name)
    }
}
