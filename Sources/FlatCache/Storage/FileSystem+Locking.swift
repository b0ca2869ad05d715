import Foundation  // and with it the C library (see Platform/PlatformLibc.swift)

/// The advisory locks every process takes on the cache's `format` file.
extension FileSystem {
    /// Opens the file at `path` for locking (never created): read and write
    /// for exclusive locks, read only for `shared` ones.
    ///
    /// - Returns: The descriptor, or `nil` when the file does not exist.
    static func openForLocking(_ path: String, shared: Bool) throws(FlatCacheError) -> Int32? {
        let mode = shared ? O_RDONLY : O_RDWR
        guard let descriptor = retryingOnInterrupt({ open(path, mode | O_CLOEXEC | O_NOFOLLOW) }) else {
            if errno == ENOENT { return nil }
            throw failure(.open, path, errno)
        }
        return descriptor
    }

    /// Waits for an advisory lock that other processes (and other descriptors
    /// in this one) respect: on Linux the bytes `range` of the file (an
    /// open-file-description lock), elsewhere the whole file (`flock`).
    /// Exclusive, or `shared` (a reader's lock, which needs only read access).
    /// Closing the descriptor releases it.
    static func lock(_ descriptor: Int32, bytes range: Range<Int>, shared: Bool, path: String) throws(FlatCacheError) {
        #if os(Linux)
        var request = flock()
        request.l_type = Int16(shared ? F_RDLCK : F_WRLCK)
        request.l_whence = Int16(SEEK_SET)
        request.l_start = off_t(range.lowerBound)
        request.l_len = off_t(range.count)
        while fcntl(descriptor, openFileDescriptionSetLockWait, &request) != 0 {
            if errno != EINTR { throw failure(.open, path, errno) }
        }
        #else
        while flock(descriptor, shared ? LOCK_SH : LOCK_EX) != 0 {
            if errno != EINTR { throw failure(.open, path, errno) }
        }
        #endif
    }

    #if os(Linux)
    /// `F_OFD_SETLKW` (Linux 3.15+), 38 on every architecture (asm-generic/fcntl.h);
    /// glibc shows it only under `_GNU_SOURCE`, which Swift's Glibc module does not define.
    private static let openFileDescriptionSetLockWait: Int32 = 38
    #endif

    /// Closes a descriptor from ``openForLocking(_:shared:)``, releasing its locks.
    static func closeLock(_ descriptor: Int32) {
        _ = close(descriptor)
    }
}
