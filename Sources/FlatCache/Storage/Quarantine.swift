import Foundation

/// The `quarantine` folder: data files that failed their check are moved
/// there with their sidecars, one subfolder per incident, never read as data
/// again and kept for inspection until `ChatCache.removeAll()`.
struct Quarantine: Sendable {
    /// The quarantine folder's path.
    let directory: String

    /// Moves `file` and its sidecar (whichever exist) into a new incident
    /// folder, and their temporary files too when they are not regular files
    /// (a folder there would make every write fail).
    ///
    /// - Returns: The incident folder's path.
    /// The file's attachment is removed, not kept: it described the content
    /// that failed its check.
    func isolate(_ file: RecordFile) throws(FlatCacheError) -> String {
        try file.removeAttachment()
        let milliseconds = Int64(Date().timeIntervalSince1970 * 1000)
        let suffix = String(UInt32.random(in: .min ... .max), radix: 16)
        let incident = "\(directory)/\(milliseconds)-\(suffix)"
        try FileSystem.createDirectory(at: incident)
        for path in [file.path, file.sidecarPath] where try FileSystem.entry(at: path) != .missing {
            try FileSystem.moveFile(at: path, to: incident + "/" + FileSystem.name(of: path))
        }
        for path in [file.path, file.sidecarPath].map(FileSystem.temporaryPath(for:)) {
            switch try FileSystem.entry(at: path) {
            case .missing, .file: continue
            case .directory, .other: try FileSystem.moveFile(at: path, to: incident + "/" + FileSystem.name(of: path))
            }
        }
        return incident
    }
}
