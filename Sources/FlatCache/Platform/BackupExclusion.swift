import Foundation

/// Keeping the cache folder out of backups (``Configuration/isExcludedFromBackup``).
enum BackupExclusion {
    /// Whether this build marks folders: on Apple platforms (iCloud and
    /// iTunes/Finder backups on iOS, tvOS, watchOS and visionOS; Time Machine
    /// on macOS), which read the mark; not on Linux or Android, which have no such mark.
    static var isApplied: Bool {
        #if canImport(Darwin)
        true
        #else
        false
        #endif
    }

    /// Sets the folder at `root`'s `isExcludedFromBackup` resource value to
    /// `excluded`, where ``isApplied``. The mark covers everything in the
    /// folder, files made later included, so only the folder carries it.
    static func apply(_ excluded: Bool, toFolder root: String) throws(FlatCacheError) {
        #if canImport(Darwin)
        var folder = URL(fileURLWithPath: root, isDirectory: true)
        if let current = try? folder.resourceValues(forKeys: [.isExcludedFromBackupKey]).isExcludedFromBackup,
            current == excluded
        {
            return
        }
        var values = URLResourceValues()
        values.isExcludedFromBackup = excluded
        do {
            try folder.setResourceValues(values)
        } catch {
            throw FileSystem.attributeFailure(root, error)
        }
        #endif
    }
}
