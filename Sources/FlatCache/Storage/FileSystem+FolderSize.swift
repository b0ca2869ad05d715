import Foundation  // and with it the C library (see Platform/PlatformLibc.swift)

extension FileSystem {
    /// The bytes and number of the regular files at or under `path` (a final
    /// symbolic link, and any link inside, is not followed); `(0, 0)` when
    /// nothing is there.
    ///
    /// What a sweep at open needs when the folder is under its size limit:
    /// one listing of each folder and one `fstatat` per entry, relative to
    /// its folder's descriptor (a lookup of one name, not of the whole path),
    /// and no string kept. The full scan (``FolderScan``) walked about 4,000
    /// paths on the benchmark's large workload in 14 ms, on the second core
    /// while an app's first reads ran (issue 32).
    static func regularFileBytes(under path: String) throws(FlatCacheError) -> (bytes: Int, files: Int) {
        guard let info = try linkStatus(at: path) else { return (0, 0) }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return (Int(info.st_size), 1)
        case S_IFDIR: return try folderBytes(at: path)
        default: return (0, 0)
        }
    }

    /// The bytes and number of the regular files in the folder at `path` and below it.
    private static func folderBytes(at path: String) throws(FlatCacheError) -> (bytes: Int, files: Int) {
        if let code = injectedFailure(.listDirectory, path) { throw failure(.listDirectory, path, code) }
        // Opened first and listed through `fdopendir`, so that the descriptor the `fstatat`s use is at
        // hand on every C library (`dirfd` is a macro on some).
        guard let descriptor = retryingOnInterrupt({ open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }) else {
            let code = errno
            // Gone, or no longer a folder, since its parent was listed: nothing of it to count.
            if code == ENOENT || code == ENOTDIR || code == ELOOP { return (0, 0) }
            throw failure(.listDirectory, path, code)
        }
        guard let directory = fdopendir(descriptor) else {
            let code = errno
            close(descriptor)
            throw failure(.listDirectory, path, code)
        }
        defer { closedir(directory) }  // closes `descriptor` too
        var total = (bytes: 0, files: 0)
        var folders = [String]()
        while let entry = readdir(directory) {
            let found = withUnsafePointer(to: &entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: pointer.pointee)) {
                    name -> Listed in
                    if name[0] == 0x2E, name[1] == 0 || (name[1] == 0x2E && name[2] == 0) { return .skipped }  // "." and ".."
                    var info = stat()
                    guard fstatat(descriptor, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
                        let code = errno
                        // An entry removed since the listing is not counted, as a walk after it would not.
                        return code == ENOENT || code == ENOTDIR ? .skipped : .failed(String(cString: name), code)
                    }
                    let kind = info.st_mode & S_IFMT
                    return .entry(kind, Int(info.st_size), kind == S_IFDIR ? String(cString: name) : nil)
                }
            }
            guard case .entry(let kind, let size, let name) = found else {
                if case .failed(let name, let code) = found { throw failure(.read, path + "/" + name, code) }
                continue
            }
            switch kind {
            case S_IFREG: total = (total.bytes + size, total.files + 1)
            case S_IFDIR: folders.append(path + "/" + name!)
            default: continue
            }
        }
        // After the listing, so that one folder's descriptor is open at a time per level.
        for folder in folders {
            let inner = try folderBytes(at: folder)
            total = (total.bytes + inner.bytes, total.files + inner.files)
        }
        return total
    }

    /// One entry of a listing, as `fstatat` found it.
    private enum Listed {
        case entry(mode_t, Int, String?)
        case skipped
        case failed(String, Int32)
    }
}
