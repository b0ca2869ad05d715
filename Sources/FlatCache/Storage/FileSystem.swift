import Foundation  // and with it the C library (see Platform/PlatformLibc.swift)

/// Every raw file operation FlatCache performs, in one place.
///
/// Plain POSIX calls, retried on `EINTR`, descriptors always closed, errors
/// wrapped as ``FlatCacheError/fileSystem(_:path:code:)``. Keeping them here
/// gives one seam to watch or fault-inject, and keeps Foundation's slower,
/// error-swallowing conveniences off the hot path.
enum FileSystem {
    /// What a path names, without following a final symbolic link.
    enum Entry: Equatable {
        case missing
        case file(size: Int)
        case directory
        case other
    }

    /// What `path` names. A final symbolic link is not followed (it is `.other`)
    /// unless `followingLinks`, as where a folder is expected.
    static func entry(at path: String, followingLinks: Bool = false) throws(FlatCacheError) -> Entry {
        guard let info = try status(at: path, followingLinks: followingLinks) else { return .missing }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .file(size: Int(info.st_size))
        case S_IFDIR: return .directory
        default: return .other
        }
    }

    /// The stamp of the regular file at `path`; `nil` when nothing, or
    /// something other than a regular file, is there. One `lstat`.
    @inline(__always)
    static func stamp(at path: String) throws(FlatCacheError) -> FileStamp? {
        guard let info = try status(at: path, followingLinks: false) else { return nil }
        return info.st_mode & S_IFMT == S_IFREG ? FileStamp(info) : nil
    }

    /// The stamp of the folder at `path` (followed through links); `nil` when
    /// no folder is there. Its modification time moves whenever a name in it
    /// is added, removed or renamed over.
    static func folderStamp(at path: String) throws(FlatCacheError) -> FileStamp? {
        guard let info = try status(at: path, followingLinks: true) else { return nil }
        return info.st_mode & S_IFMT == S_IFDIR ? FileStamp(info) : nil
    }

    /// What `stat` (or, not following a final link, `lstat`) says of `path`;
    /// `nil` when nothing is there.
    @inline(__always)
    /// What one `lstat` says about `path` (a final symbolic link is not
    /// followed); `nil` when nothing is there.
    static func linkStatus(at path: String) throws(FlatCacheError) -> stat? {
        try status(at: path, followingLinks: false)
    }

    private static func status(at path: String, followingLinks: Bool) throws(FlatCacheError) -> stat? {
        var info = stat()
        guard (followingLinks ? stat(path, &info) : lstat(path, &info)) == 0 else {
            let code = errno
            if code == ENOENT || code == ENOTDIR { return nil }
            throw failure(.read, path, code)
        }
        return info
    }

    /// When the file at `path` was last modified, in milliseconds since 1970;
    /// `nil` when there is none. A final symbolic link is not followed.
    static func modificationTime(at path: String) throws(FlatCacheError) -> Int64? {
        guard let info = try status(at: path, followingLinks: false) else { return nil }
        let time = info.modificationTimespec
        return Int64(time.tv_sec) * 1000 + Int64(time.tv_nsec) / 1_000_000
    }

    /// The whole contents of the file at `path`, or `nil` when there is none.
    ///
    /// One `open`, one `fstat` and reads into a buffer of the file's size.
    /// A final symbolic link is not followed: it fails with `ELOOP`; a folder,
    /// FIFO or device fails with `EISDIR` (see ``isNotARegularFile(_:)``).
    static func contentsOfFile(at path: String) throws(FlatCacheError) -> Data? {
        try readFile(at: path)?.contents
    }

    /// The whole contents of the file at `path` and its stamp as it was opened,
    /// or `nil` when there is none; as ``contentsOfFile(at:)``.
    static func readFile(at path: String) throws(FlatCacheError) -> (contents: Data, stamp: FileStamp)? {
        if let code = injectedFailure(.open, path) { throw failure(.open, path, code) }
        // O_NONBLOCK: a FIFO planted at the path must not block the open (regular files ignore it).
        let descriptor = retryingOnInterrupt { open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK) }
        guard let descriptor else {
            let code = errno
            if code == ENOENT { return nil }
            throw failure(.open, path, code)
        }
        defer { _ = close(descriptor) }

        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw failure(.read, path, errno) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw failure(.read, path, EISDIR) }

        // One byte more than the size: a read that stops at the size, then one that finds
        // nothing, prove the end without growing (and zeroing) the buffer. Not zero-filled
        // first, as Data(count:) would be: every byte is read before it is seen.
        var capacity = Int(info.st_size) + 1
        guard var buffer = malloc(capacity) else { throw failure(.read, path, ENOMEM) }
        var filled = 0
        do throws(FlatCacheError) {
            while true {
                if filled == capacity {
                    // The file grew since fstat: read on.
                    capacity += max(4096, capacity / 2)
                    guard let grown = realloc(buffer, capacity) else { throw failure(.read, path, ENOMEM) }
                    buffer = grown
                }
                if let code = injectedFailure(.read, path) { throw failure(.read, path, code) }
                let got = read(descriptor, buffer + filled, capacity - filled)
                if got < 0 {
                    if errno == EINTR { continue }
                    throw failure(.read, path, errno)
                }
                if got == 0 { break }
                filled += got
            }
        } catch {
            free(buffer)
            throw error
        }
        return (Data(bytesNoCopy: buffer, count: filled, deallocator: .free), FileStamp(info))
    }

    /// Replaces the file at `path` with `data` atomically (see ``replaceFiles(_:synchronized:)``).
    static func replaceFile(at path: String, with data: Data, synchronized: Bool) throws(FlatCacheError) {
        try replaceFiles([(path, data)], synchronized: synchronized)
    }

    /// Replaces files of one folder atomically, each through a hidden temporary
    /// file beside it (`.<name>.tmp`, reused if a crash left one), renamed over
    /// its target in the order given.
    ///
    /// With `synchronized`, every temporary file is `fsync`ed before the first
    /// rename and the folder once after the last, so the replaced files survive
    /// a power loss. A missing folder is created first.
    static func replaceFiles(_ files: [(path: String, contents: Data)], synchronized: Bool) throws(FlatCacheError) {
        var written = [String]()
        do throws(FlatCacheError) {
            for file in files {
                written.append(try writeTemporary(file.contents, for: file.path, synchronized: synchronized))
            }
            for (temporary, file) in zip(written, files) {
                if let code = injectedFailure(.rename, file.path) { throw failure(.rename, file.path, code) }
                note(.willChangeBinding, temporary)
                note(.willChangeBinding, file.path)
                guard rename(temporary, file.path) == 0 else { throw failure(.rename, file.path, errno) }
            }
        } catch {
            for temporary in written { _ = unlink(temporary) }
            throw error
        }
        if synchronized, let first = files.first { try synchronizeDirectory(at: parent(of: first.path)) }
    }

    /// Writes `data` to the temporary file of `path` and closes it; returns its path.
    static func writeTemporary(_ data: Data, for path: String, synchronized: Bool) throws(FlatCacheError) -> String {
        let temporary = temporaryPath(for: path)
        let flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW
        if let code = injectedFailure(.open, temporary) { throw failure(.open, temporary, code) }
        note(.willChangeBinding, temporary)
        note(.willChangeContent, temporary)
        var opened = retryingOnInterrupt { open(temporary, flags, 0o644) }
        if opened == nil, errno == ENOENT {
            // The folder is gone (first write, or removed from outside): recreate it.
            try createDirectory(at: parent(of: path))
            opened = retryingOnInterrupt { open(temporary, flags, 0o644) }
        }
        guard let descriptor = opened else { throw failure(.open, temporary, errno) }
        note(.created, temporary)
        do throws(FlatCacheError) {
            try writeAll(data, to: descriptor, path: temporary)
            if synchronized {
                if let code = injectedFailure(.sync, temporary) { throw failure(.sync, temporary, code) }
                if synchronize(descriptor) != 0 { throw failure(.sync, temporary, errno) }
                note(.synchronized, temporary)
            }
        } catch {
            _ = close(descriptor)
            _ = unlink(temporary)
            throw error
        }
        // close can report a delayed write error (NFS, quotas): do not rename a file that failed.
        if close(descriptor) != 0, errno != EINTR {
            let code = errno
            _ = unlink(temporary)
            throw failure(.write, temporary, code)
        }
        return temporary
    }


    /// Whether `error` says a path held a link, folder or device where a regular file belongs.
    static func isNotARegularFile(_ error: FlatCacheError) -> Bool {
        guard case .fileSystem(_, _, let code) = error else { return false }
        return code == .ELOOP || code == .EISDIR
    }

    /// The absolute path with every symbolic link and `.`/`..` resolved, for an existing path.
    static func canonicalPath(of path: String) throws(FlatCacheError) -> String {
        guard let resolved = realpath(path, nil) else { throw failure(.read, path, errno) }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Whether this process may create files in `folder` and write `file`:
    /// `false` for missing permissions and on a read-only mount.
    static func isWritable(folder: String, file: String) -> Bool {
        access(folder, W_OK | X_OK) == 0 && access(file, W_OK) == 0
    }

    /// Removes the file at `path`; a file that is already gone is fine.
    static func removeFile(at path: String) throws(FlatCacheError) {
        if let code = injectedFailure(.remove, path) { throw failure(.remove, path, code) }
        note(.willChangeBinding, path)
        guard unlink(path) == 0 || errno == ENOENT else { throw failure(.remove, path, errno) }
    }

    /// Sets the modification time of the file at `path` to now, as a write would.
    static func markModified(at path: String) throws(FlatCacheError) {
        if let code = injectedFailure(.write, path) { throw failure(.write, path, code) }
        guard utimensat(AT_FDCWD, path, nil, 0) == 0 else { throw failure(.write, path, errno) }
    }

    /// Removes what stands at `path`: a file or link, or a folder and
    /// everything in it (never a link's target); a missing one is fine.
    static func removeItem(at path: String) throws(FlatCacheError) {
        guard try entry(at: path) == .directory else { return try removeFile(at: path) }
        for name in try contentsOfDirectory(at: path) { try removeItem(at: path + "/" + name) }
        guard rmdir(path) == 0 || errno == ENOENT else { throw failure(.remove, path, errno) }
    }

    /// Moves the file at `source` to `destination` (same file system), replacing nothing.
    static func moveFile(at source: String, to destination: String) throws(FlatCacheError) {
        if let code = injectedFailure(.rename, destination) { throw failure(.rename, destination, code) }
        note(.willChangeBinding, source)
        note(.willChangeBinding, destination)
        guard rename(source, destination) == 0 else { throw failure(.rename, source, errno) }
    }

    /// Creates the folder at `path` and any missing parents; an existing folder is fine.
    static func createDirectory(at path: String) throws(FlatCacheError) {
        // Follow links: an ancestor such as /tmp may be a link to a folder (/private/tmp on macOS).
        switch try entry(at: path, followingLinks: true) {
        case .directory: return
        case .file, .other: throw failure(.createDirectory, path, ENOTDIR)
        case .missing: break
        }
        let up = parent(of: path)
        if up != path, !up.isEmpty { try createDirectory(at: up) }
        if let code = injectedFailure(.createDirectory, path) { throw failure(.createDirectory, path, code) }
        guard mkdir(path, 0o755) == 0 || errno == EEXIST else {
            throw failure(.createDirectory, path, errno)
        }
    }

    /// The names in the folder at `path` (without `.` and `..`), sorted.
    static func contentsOfDirectory(at path: String) throws(FlatCacheError) -> [String] {
        guard let directory = opendir(path) else { throw failure(.listDirectory, path, errno) }
        defer { closedir(directory) }
        var names = [String]()
        while let entry = readdir(directory) {
            let name = withUnsafePointer(to: &entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: pointer.pointee)) {
                    String(cString: $0)
                }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// The folder part of `path` ("/a/b" for "/a/b/c").
    static func parent(of path: String) -> String {
        guard let slash = lastSlash(in: path) else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// The file-name part of `path` ("c" for "/a/b/c").
    static func name(of path: String) -> String {
        guard let slash = lastSlash(in: path) else { return path }
        return String(path[path.utf8.index(after: slash)...])
    }

    /// The last "/" in `path`, found in its UTF-8 bytes: a search by
    /// `Character` walks grapheme clusters, and a sweep asks this of every file.
    private static func lastSlash(in path: String) -> String.Index? {
        path.utf8.lastIndex(of: UInt8(ascii: "/"))
    }

    /// The hidden temporary file a write of `path` goes through.
    static func temporaryPath(for path: String) -> String {
        parent(of: path) + "/." + name(of: path) + ".tmp"
    }

    // MARK: - Helpers

    /// The `errno` a test armed for `operation` on `path` (`FaultInjection`, debug
    /// builds only); a release build has no such check on its system calls.
    @inline(__always)
    static func injectedFailure(_ operation: FlatCacheError.FileOperation, _ path: String) -> Int32? {
        #if FLATCACHE_FAULTS
        PowerCut.failure(path) ?? FaultInjection.failure(operation, path)
        #else
        nil
        #endif
    }

    /// What a simulated power cut must know (`PowerCut`, debug builds only): a
    /// change to come, or an `fsync` done; a release build calls nothing.
    @inline(__always)
    static func note(_ event: PowerCutEvent, _ path: String) {
        #if FLATCACHE_FAULTS
        switch event {
        case .willChangeContent: PowerCut.willChangeContent(path)
        case .willChangeBinding: PowerCut.willChangeBinding(path)
        case .created: PowerCut.created(path)
        case .synchronized: PowerCut.synchronized(path)
        case .synchronizedFolder: PowerCut.synchronizedFolder(path)
        }
        #endif
    }

    /// See ``note(_:_:)``.
    enum PowerCutEvent {
        case willChangeContent, willChangeBinding, created, synchronized, synchronizedFolder
    }

    /// The most bytes a test lets one `write` call on `path` take (`FaultInjection`,
    /// debug builds only); `nil`, no limit, in a release build.
    @inline(__always)
    static func injectedWriteLimit(_ path: String) -> Int? {
        #if FLATCACHE_FAULTS
        FaultInjection.writeLimit(path)
        #else
        nil
        #endif
    }

    /// Writes all of `data` to `descriptor`, carrying on after short writes.
    static func writeAll(_ data: Data, to descriptor: Int32, path: String) throws(FlatCacheError) {
        let limit = injectedWriteLimit(path) ?? Int.max
        let failedCode: Int32? = data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                if let code = injectedFailure(.write, path) { return code }
                let written = write(descriptor, buffer.baseAddress! + offset, min(limit, buffer.count - offset))
                if written < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += written  // a short write just continues from where it stopped
            }
            return nil
        }
        if let failedCode { throw failure(.write, path, failedCode) }
    }

    /// Flushes the folder at `path` (its entries: renames, new files) to the disk.
    static func synchronizeDirectory(at path: String) throws(FlatCacheError) {
        if let code = injectedFailure(.sync, path) { throw failure(.sync, path, code) }
        let descriptor = retryingOnInterrupt { open(path, O_RDONLY | O_CLOEXEC | O_DIRECTORY) }
        guard let descriptor else { throw failure(.open, path, errno) }
        defer { _ = close(descriptor) }
        guard synchronizeFolder(descriptor) == 0 else { throw failure(.sync, path, errno) }
        note(.synchronizedFolder, path)
    }

    /// Runs `call` again while it fails with `EINTR`; `nil` when it fails otherwise (see `errno`).
    static func retryingOnInterrupt(_ call: () -> Int32) -> Int32? {
        while true {
            let result = call()
            if result >= 0 { return result }
            if errno != EINTR { return nil }
        }
    }

    /// The error for `operation` on `path` failing with `code` (an `errno`).
    static func failure(
        _ operation: FlatCacheError.FileOperation, _ path: String, _ code: Int32
    ) -> FlatCacheError {
        .fileSystem(operation, path: path, code: POSIXErrorCode(rawValue: code) ?? .EIO)
    }
}
