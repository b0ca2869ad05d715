import Foundation

/// The `format` file at a cache's root: `flatcache 2\n`.
///
/// Written on first open; a folder marked `flatcache 1` opens and reads, and
/// its marker becomes `flatcache 2` at its first write (``FormatUpgrade``);
/// a folder marked with another version is refused,
/// and so is a folder holding other files and no marker (it is someone else's).
/// A folder holding only FlatCache's own files gets its marker (back): the
/// cache folder was removed from outside and recreated by a save, or a crash
/// came between creating the folder and marking it.
enum FormatMarker {
    /// The on-disk format version this build reads and writes.
    static let currentVersion = 2

    /// The versions this build reads: format 1 is format 2 with no appended lines.
    static let readableVersions = 1...2

    /// The marker's exact bytes for ``currentVersion``.
    static var contents: Data { contents(version: currentVersion) }

    /// The marker's exact bytes for `version`.
    static func contents(version: Int) -> Data { Data("flatcache \(version)\n".utf8) }

    /// Makes `layout.root` a cache folder of the current format, or explains why it is not one.
    ///
    /// Creates the folder when missing, writes the marker into an empty folder,
    /// and accepts a folder whose marker matches. With `readOnly`, creates and
    /// changes nothing: the folder must exist and carry the marker.
    ///
    /// - Returns: Whether the folder can be written: `false` when `readOnly`,
    ///   or when the marker or folder refuses writing (permissions, a read-only mount).
    static func prepare(
        _ layout: CacheLayout, directory: URL, synchronized: Bool, readOnly: Bool
    ) throws(FlatCacheError) -> Bool {
        switch try FileSystem.entry(at: layout.root, followingLinks: true) {
        case .file, .other: throw .notADirectory(directory)
        case .missing where readOnly: throw .notACacheDirectory(directory)
        case .missing: try FileSystem.createDirectory(at: layout.root)
        case .directory: break
        }
        if let marker = try FileSystem.contentsOfFile(at: layout.formatMarkerPath) {
            guard readableVersions.contains(where: { contents(version: $0) == marker }) else {
                let text = String(decoding: marker.prefix(64), as: UTF8.self)
                throw .unsupportedFormat(
                    marker: text.trimmingCharacters(in: .whitespacesAndNewlines), directory: directory)
            }
            guard !readOnly, FileSystem.isWritable(folder: layout.root, file: layout.formatMarkerPath) else {
                return false
            }
            try removeLinkedFolders(layout)
            return true
        }
        guard !readOnly else { throw .notACacheDirectory(directory) }
        // Hidden names (a crash's temporary files, .DS_Store) do not make a folder someone else's.
        let foreign = try FileSystem.contentsOfDirectory(at: layout.root).filter {
            !$0.hasPrefix(".") && !layout.ownNames.contains($0)
        }
        guard foreign.isEmpty else { throw .notACacheDirectory(directory) }
        try removeLinkedFolders(layout)
        try FileSystem.replaceFile(at: layout.formatMarkerPath, with: contents, synchronized: synchronized)
        return true
    }

    /// Removes a symbolic link (or anything but a folder) standing where
    /// `messages` or `quarantine` belongs: file names are opened with
    /// `O_NOFOLLOW`, which guards the last path component only, so a linked
    /// folder would lead writes out of the cache. The link goes, never its
    /// target; the folder is made again when first needed.
    private static func removeLinkedFolders(_ layout: CacheLayout) throws(FlatCacheError) {
        for folder in [layout.messagesDirectory, layout.quarantine.directory] {
            switch try FileSystem.entry(at: folder) {
            case .directory, .missing: continue
            case .file, .other: try FileSystem.removeFile(at: folder)
            }
        }
    }
}
