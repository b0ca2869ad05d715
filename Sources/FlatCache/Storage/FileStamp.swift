import Foundation

/// What one `stat` says about a file: enough to notice that anyone, in any
/// process, wrote it since: a replace makes a new file (another inode), an
/// append changes the size, and every write moves the change time.
struct FileStamp: Hashable, Sendable {
    let device: UInt64
    let inode: UInt64
    let size: Int
    let modified: Timestamp
    let changed: Timestamp

    /// Seconds and nanoseconds, as `stat` gives them.
    struct Timestamp: Hashable, Sendable {
        let seconds: Int
        let nanoseconds: Int
    }

    /// A stamp of the given parts (as a snapshot of the search index keeps them).
    init(device: UInt64, inode: UInt64, size: Int, modified: Timestamp, changed: Timestamp) {
        (self.device, self.inode, self.size, self.modified, self.changed) = (device, inode, size, modified, changed)
    }

    init(_ info: stat) {
        device = UInt64(truncatingIfNeeded: info.st_dev)
        inode = UInt64(truncatingIfNeeded: info.st_ino)
        size = Int(info.st_size)
        let (modification, change) = (info.modificationTimespec, info.statusChangeTimespec)
        modified = Timestamp(seconds: Int(modification.tv_sec), nanoseconds: Int(modification.tv_nsec))
        changed = Timestamp(seconds: Int(change.tv_sec), nanoseconds: Int(change.tv_nsec))
    }
}
