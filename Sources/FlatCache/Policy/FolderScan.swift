import Foundation

/// Every file in a cache folder with its size, found by listing the folder
/// and one `lstat` per file: what the size sweep and the statistics start from.
struct FolderScan {
    /// A channel's message file, its sidecar and its continuity.
    struct MessageFile {
        let file: RecordFile
        /// The data file's stamp when scanned; a sweep removes it only if it is still this.
        let stamp: FileStamp
        /// The data file, its sidecar and its continuity with its sidecar.
        let bytes: Int
    }

    /// What one incident moved to `quarantine/` (a file or a folder of them).
    struct QuarantinedFile {
        let path: String
        let bytes: Int
        /// When it was moved there, in milliseconds since 1970.
        let modified: Int64
    }

    /// Every message file.
    private(set) var messageFiles = [MessageFile]()
    /// Everything in `quarantine/`.
    private(set) var quarantined = [QuarantinedFile]()
    /// The bytes of the channel list (with its continuity) and the users, each with its sidecar (0 when missing).
    private(set) var channelsBytes = 0
    private(set) var usersBytes = 0
    /// `usage.lines`' stamp, when it exists.
    private(set) var usageStamp: FileStamp?
    /// Every byte and file in the folder, the ones above and every other (markers, sidecars, leftovers).
    private(set) var totalBytes = 0
    private(set) var totalFiles = 0

    /// The bytes in `quarantine/`.
    var quarantinedBytes: Int { quarantined.reduce(0) { $0 + $1.bytes } }

    /// Scans the folder of `layout`.
    init(_ layout: CacheLayout, usageFile: RecordFile) throws(FlatCacheError) {
        (totalBytes, totalFiles) = try Self.size(of: layout.root)
        usageStamp = try FileSystem.stamp(at: usageFile.path)
        channelsBytes = try bytes(of: layout.channelsFile)
        usersBytes = try bytes(of: layout.usersFile)
        for file in try layout.messageFiles() {
            guard let stamp = try FileSystem.stamp(at: file.path) else { continue }
            messageFiles.append(MessageFile(file: file, stamp: stamp, bytes: try bytes(of: file)))
        }
        let quarantine = layout.quarantine.directory
        if try FileSystem.entry(at: quarantine) == .directory {
            for name in try FileSystem.contentsOfDirectory(at: quarantine) {
                let path = quarantine + "/" + name
                guard let modified = try FileSystem.modificationTime(at: path) else { continue }
                quarantined.append(QuarantinedFile(path: path, bytes: try Self.size(of: path).bytes, modified: modified))
            }
        }
    }

    /// The bytes and number of the regular files at or under `path`.
    static func size(of path: String) throws(FlatCacheError) -> (bytes: Int, files: Int) {
        switch try FileSystem.entry(at: path) {
        case .file(let size):
            return (size, 1)
        case .directory:
            var total = (bytes: 0, files: 0)
            for name in try FileSystem.contentsOfDirectory(at: path) {
                let inner = try size(of: path + "/" + name)
                total = (total.bytes + inner.bytes, total.files + inner.files)
            }
            return total
        default:
            return (0, 0)
        }
    }

    /// The bytes of `file`, its sidecar, and its attachment with its sidecar
    /// (which goes with it: its bytes count with the file's); 0 for each one missing.
    private func bytes(of file: RecordFile) throws(FlatCacheError) -> Int {
        let own = (try FileSystem.stamp(at: file.path)?.size ?? 0) + (try FileSystem.stamp(at: file.sidecarPath)?.size ?? 0)
        guard let attachment = file.attachment else { return own }
        return own + (try bytes(of: RecordFile(path: attachment)))
    }
}

extension FileStamp.Timestamp {
    /// Milliseconds since 1970.
    var milliseconds: Int64 { Int64(seconds) * 1_000 + Int64(nanoseconds / 1_000_000) }
}
