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

    /// Scans the folder of `layout`: one listing of each folder and one
    /// `lstat` per entry, and none for a file the listing did not show.
    init(_ layout: CacheLayout, usageFile: RecordFile) throws(FlatCacheError) {
        var entries = Entries()
        (totalBytes, totalFiles) = try entries.walk(layout.root)
        usageStamp = try entries.stamp(at: usageFile.path)
        channelsBytes = try entries.bytes(of: layout.channelsFile)
        usersBytes = try entries.bytes(of: layout.usersFile)
        for file in try layout.messageFiles() {
            guard let stamp = try entries.stamp(at: file.path) else { continue }
            messageFiles.append(MessageFile(file: file, stamp: stamp, bytes: try entries.bytes(of: file)))
        }
        let quarantine = layout.quarantine.directory
        if try FileSystem.entry(at: quarantine) == .directory {
            for name in try FileSystem.contentsOfDirectory(at: quarantine) {
                let path = quarantine + "/" + name
                guard let found = try entries.entry(at: path) else { continue }
                quarantined.append(QuarantinedFile(path: path, bytes: found.bytes, modified: found.modified))
            }
        }
    }

    /// The bytes and number of the regular files at or under `path`.
    static func size(of path: String) throws(FlatCacheError) -> (bytes: Int, files: Int) {
        var entries = Entries()
        return try entries.walk(path)
    }

    /// What the walk of the folder found, by path: each entry `lstat`ed once.
    /// A path in a folder it listed but not in the listing is missing (no
    /// `lstat` for the continuity files most channels lack); any other path
    /// it did not see is `lstat`ed when asked for.
    private struct Entries {
        struct Found {
            /// The regular file's stamp; `nil` for a folder or anything else.
            let stamp: FileStamp?
            /// The regular file's size, or the bytes of the regular files under the folder.
            let bytes: Int
            /// When it was last modified, in milliseconds since 1970.
            let modified: Int64
        }

        private var found = [String: Found]()
        /// The folders listed: a path in one of them that the listing did not show is missing.
        private var listed = Set<String>()

        /// Walks `path`, remembering every entry at or under it; returns the
        /// bytes and number of the regular files there.
        mutating func walk(_ path: String) throws(FlatCacheError) -> (bytes: Int, files: Int) {
            guard let info = try FileSystem.linkStatus(at: path) else { return (0, 0) }
            let modified = FileStamp(info).modified.milliseconds
            switch info.st_mode & S_IFMT {
            case S_IFREG:
                found[path] = Found(stamp: FileStamp(info), bytes: Int(info.st_size), modified: modified)
                return (Int(info.st_size), 1)
            case S_IFDIR:
                var total = (bytes: 0, files: 0)
                for name in try FileSystem.contentsOfDirectory(at: path) {
                    let inner = try walk(path + "/" + name)
                    total = (total.bytes + inner.bytes, total.files + inner.files)
                }
                found[path] = Found(stamp: nil, bytes: total.bytes, modified: modified)
                listed.insert(path)
                return total
            default:
                found[path] = Found(stamp: nil, bytes: 0, modified: modified)
                return (0, 0)
            }
        }

        /// What is at `path`: as the walk found it, or walked now; `nil` when nothing is there.
        mutating func entry(at path: String) throws(FlatCacheError) -> Found? {
            if let known = found[path] { return known }
            if listed.contains(FileSystem.parent(of: path)) { return nil }
            _ = try walk(path)
            return found[path]
        }

        /// The stamp of the regular file at `path`; `nil` when none is there.
        mutating func stamp(at path: String) throws(FlatCacheError) -> FileStamp? {
            try entry(at: path)?.stamp
        }

        /// The bytes of `file`, its sidecar, and its attachment with its sidecar
        /// (which goes with it: its bytes count with the file's); 0 for each one missing.
        mutating func bytes(of file: RecordFile) throws(FlatCacheError) -> Int {
            let own = (try stamp(at: file.path)?.size ?? 0) + (try stamp(at: file.sidecarPath)?.size ?? 0)
            guard let attachment = file.attachment else { return own }
            return own + (try bytes(of: RecordFile(path: attachment)))
        }
    }
}

extension FileStamp.Timestamp {
    /// Milliseconds since 1970.
    var milliseconds: Int64 { Int64(seconds) * 1_000 + Int64(nanoseconds / 1_000_000) }
}
