#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

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

    init(_ info: stat) {
        device = UInt64(truncatingIfNeeded: info.st_dev)
        inode = UInt64(truncatingIfNeeded: info.st_ino)
        size = Int(info.st_size)
        #if canImport(Darwin)
        modified = Timestamp(seconds: info.st_mtimespec.tv_sec, nanoseconds: info.st_mtimespec.tv_nsec)
        changed = Timestamp(seconds: info.st_ctimespec.tv_sec, nanoseconds: info.st_ctimespec.tv_nsec)
        #else
        modified = Timestamp(seconds: info.st_mtim.tv_sec, nanoseconds: info.st_mtim.tv_nsec)
        changed = Timestamp(seconds: info.st_ctim.tv_sec, nanoseconds: info.st_ctim.tv_nsec)
        #endif
    }
}
