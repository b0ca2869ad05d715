import Foundation  // and with it the C library (see Platform/PlatformLibc.swift)

/// Writes to a file in place, without the temporary file and rename of a
/// replace: the appends and sidecar rewrites whose safety the sidecar's
/// digest provides (see ``RecordFile``), and `fsync`.
extension FileSystem {
    /// Appends `data` to the existing regular file at `path`, provided it
    /// still has the stamp `expected`, and returns its new stamp and its
    /// ``generation(of:status:)``, which the journal names, taken through the
    /// same descriptor; `nil` (and nothing written) when the file changed or is gone.
    ///
    /// Not atomic by itself: the caller keeps the sidecar telling which
    /// prefix of the file was whole (see ``RecordFile``).
    static func append(
        _ data: Data, to path: String, expecting expected: FileStamp
    ) throws(FlatCacheError) -> (stamp: FileStamp, generation: UInt64)? {
        if let code = injectedFailure(.open, path) { throw failure(.open, path, code) }
        guard let descriptor = retryingOnInterrupt({ open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK) })
        else {
            let code = errno
            if code == ENOENT || code == ELOOP { return nil }
            throw failure(.open, path, code)
        }
        var closed = false
        defer { if !closed { _ = close(descriptor) } }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw failure(.read, path, errno) }
        guard info.st_mode & S_IFMT == S_IFREG, FileStamp(info) == expected else { return nil }
        note(.willChangeContent, path)
        try writeAll(data, to: descriptor, path: path)
        guard fstat(descriptor, &info) == 0 else { throw failure(.read, path, errno) }
        let generation = generation(of: descriptor, status: info)
        closed = true
        if close(descriptor) != 0, errno != EINTR { throw failure(.write, path, errno) }
        return (FileStamp(info), generation)
    }

    /// Writes `data` over the start of the file at `path` in place (creating
    /// it when missing) and cuts it to `data.count` bytes: for a sidecar, whose
    /// one line always has the same length, a single small write. Returns its stamp.
    @discardableResult
    static func overwriteFile(at path: String, with data: Data) throws(FlatCacheError) -> FileStamp {
        if let code = injectedFailure(.open, path) { throw failure(.open, path, code) }
        note(.willChangeContent, path)
        // The file is there but for the first write: opened without O_CREAT first, so that the
        // common case takes no `stat` of its own, and a file made here is told apart.
        let flags = O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK
        var found = retryingOnInterrupt({ open(path, flags) })
        if found == nil, errno == ENOENT {
            note(.willChangeBinding, path)
            found = retryingOnInterrupt({ open(path, flags | O_CREAT, 0o644) })
            if found != nil { note(.created, path) }
        }
        guard let descriptor = found else { throw failure(.open, path, errno) }
        var closed = false
        defer { if !closed { _ = close(descriptor) } }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw failure(.read, path, errno) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw failure(.write, path, EISDIR) }
        if let code = injectedFailure(.write, path) { throw failure(.write, path, code) }
        let written = data.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        guard written == data.count else { throw failure(.write, path, written < 0 ? errno : EIO) }
        if Int(info.st_size) > data.count, ftruncate(descriptor, off_t(data.count)) != 0 {
            throw failure(.write, path, errno)
        }
        guard fstat(descriptor, &info) == 0 else { throw failure(.read, path, errno) }
        closed = true
        if close(descriptor) != 0, errno != EINTR { throw failure(.write, path, errno) }
        return FileStamp(info)
    }

    /// Cuts the regular file at `path` to its first `size` bytes.
    static func truncateFile(at path: String, to size: Int) throws(FlatCacheError) {
        if let code = injectedFailure(.write, path) { throw failure(.write, path, code) }
        guard let descriptor = retryingOnInterrupt({ open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK) }) else {
            throw failure(.open, path, errno)
        }
        defer { _ = close(descriptor) }
        note(.willChangeContent, path)
        guard ftruncate(descriptor, off_t(size)) == 0 else { throw failure(.write, path, errno) }
    }

    /// Appends `data` to the file at `path` (created when missing) in one
    /// write under an exclusive `flock` of it, then flushes it to the disk:
    /// for the journal, which writers of several threads and processes append to.
    static func appendSynchronized(_ data: Data, to path: String) throws(FlatCacheError) {
        if let code = injectedFailure(.open, path) { throw failure(.open, path, code) }
        let creating = try stamp(at: path) == nil
        if creating { note(.willChangeBinding, path) }
        guard let descriptor = retryingOnInterrupt({ open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o644) })
        else { throw failure(.open, path, errno) }
        defer { _ = close(descriptor) }
        if creating { note(.created, path) }
        guard retryingOnInterrupt({ flock(descriptor, LOCK_EX) }) != nil else { throw failure(.open, path, errno) }
        note(.willChangeContent, path)
        try writeAll(data, to: descriptor, path: path)
        if let code = injectedFailure(.sync, path) { throw failure(.sync, path, code) }
        guard synchronize(descriptor) == 0 else { throw failure(.sync, path, errno) }
        note(.synchronized, path)
        // A journal made now is durable only once its folder names it.
        if creating { try synchronizeDirectory(at: parent(of: path)) }
    }

    /// Writes `data` into the file at `path` at `offset`, in place (a journal's replay).
    static func writeFile(_ data: Data, at path: String, offset: Int) throws(FlatCacheError) {
        if let code = injectedFailure(.open, path) { throw failure(.open, path, code) }
        guard let descriptor = retryingOnInterrupt({ open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK) }) else {
            throw failure(.open, path, errno)
        }
        defer { _ = close(descriptor) }
        if let code = injectedFailure(.write, path) { throw failure(.write, path, code) }
        note(.willChangeContent, path)
        let written = data.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, off_t(offset)) }
        guard written == data.count else { throw failure(.write, path, written < 0 ? errno : EIO) }
    }

    /// A number that tells two files apart that had the same inode number
    /// one after the other (a file system may give a freed inode's number to
    /// the next new file): the inode's generation on Linux (`FS_IOC_GETVERSION`,
    /// random per inode on ext4), the birth time in nanoseconds on Apple
    /// platforms; 0 where the file system keeps neither.
    static func generation(at path: String) -> UInt64 {
        #if canImport(Glibc)
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard descriptor >= 0 else { return 0 }
        defer { _ = close(descriptor) }
        return generation(of: descriptor, status: stat())
        #else
        var info = stat()
        guard lstat(path, &info) == 0 else { return 0 }
        return generation(of: -1, status: info)
        #endif
    }

    /// ``generation(at:)`` of the file open as `descriptor` (Linux asks it), whose `stat` is `info`
    /// (Apple platforms read it).
    static func generation(of descriptor: Int32, status info: stat) -> UInt64 {
        #if canImport(Glibc)
        var generation = 0
        // FS_IOC_GETVERSION: _IOR('v', 1, long).
        guard ioctl(descriptor, UInt(0x8008_7601), &generation) == 0 else { return 0 }
        return UInt64(UInt32(truncatingIfNeeded: generation))
        #else
        let born = info.st_birthtimespec
        return UInt64(truncatingIfNeeded: Int64(born.tv_sec) &* 1_000_000_000 &+ Int64(born.tv_nsec))
        #endif
    }

    /// Flushes the file at `path` to the disk (see ``synchronize(_:)``, through a new descriptor).
    static func synchronizeFile(at path: String) throws(FlatCacheError) {
        if let code = injectedFailure(.sync, path) { throw failure(.sync, path, code) }
        guard let descriptor = retryingOnInterrupt({ open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK) }) else {
            throw failure(.open, path, errno)
        }
        defer { _ = close(descriptor) }
        guard synchronize(descriptor) == 0 else { throw failure(.sync, path, errno) }
        note(.synchronized, path)
    }
}
