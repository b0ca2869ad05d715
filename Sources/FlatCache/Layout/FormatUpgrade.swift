import Foundation

/// Marks a format-1 folder as format 2 at its first write of records.
///
/// A format-1 folder is already a format-2 folder that holds no appended
/// lines (docs/format.md, "Format 2"), so the upgrade changes only the
/// marker, before anything format 2 alone allows is written: a crash on
/// either side of it leaves a folder that reads right. The marker is
/// rewritten in place, not replaced: it is the file every instance on the
/// folder takes its locks on, and a new inode would split them.
final class FormatUpgrade: @unchecked Sendable {
    // Lock rule (docs/reliability.md, "Liveness"): held only to read or change `pending`; the write is outside it.
    private let lock = NSLock()
    private var pending = true  // guarded by `lock`
    private let path: String
    private let synchronized: Bool

    /// An upgrade for the folder of `layout`, when its marker says format 1; `nil` otherwise.
    static func needed(_ layout: CacheLayout, synchronized: Bool) throws(FlatCacheError) -> FormatUpgrade? {
        guard try FileSystem.contentsOfFile(at: layout.formatMarkerPath) == FormatMarker.contents(version: 1) else { return nil }
        return FormatUpgrade(path: layout.formatMarkerPath, synchronized: synchronized)
    }

    private init(path: String, synchronized: Bool) {
        self.path = path
        self.synchronized = synchronized
    }

    /// Rewrites the marker as format 2, once; later calls return at once.
    /// Call before writing records.
    func run() throws(FlatCacheError) {
        guard lock.withLock({ pending }) else { return }
        // Another instance may have upgraded the folder already; then the bytes are the same.
        _ = try FileSystem.overwriteFile(at: path, with: FormatMarker.contents)
        if synchronized { try FileSystem.synchronizeFile(at: path) }
        lock.withLock { pending = false }
    }
}
