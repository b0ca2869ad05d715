import Foundation  // and with it the C library (see Platform/PlatformLibc.swift)

/// Open descriptors of the folders whose files a memory hit `stat`s, so that
/// the `stat` looks up one name relative to its folder instead of every
/// component of the path. On the benchmark's paths the path walk was about
/// a third of a page from memory (issue 32).
///
/// The `stat` says what the path's own `lstat` would while the folder at
/// that path is the one opened. FlatCache never replaces a cache's folders:
/// `removeAll()` deletes `messages/` file by file and it is made again
/// later, so a file that is still found through the old folder's
/// descriptor is found by its path too. When the descriptor finds nothing,
/// the path is asked, and a folder found replaced is opened again.
final class FolderHandles: @unchecked Sendable {
    // Lock rule (docs/reliability.md, "Liveness"): held only to read or change `handles`; no
    // system call is made while it is held.
    private let lock = NSLock()
    /// By folder path; a handful at most (the messages folder, the root).
    private var handles = [(folder: String, descriptor: Int32)]()  // guarded by `lock`
    /// Descriptors of folders found replaced: kept open until the end, since
    /// another thread may be `stat`ing through one (a closed number can be reused).
    private var retired = [Int32]()  // guarded by `lock`
    /// Past this many folders, a file's stamp is taken by its path.
    private static let limit = 4

    deinit {
        for handle in handles { close(handle.descriptor) }
        for descriptor in retired { close(descriptor) }
    }

    /// The stamp of `file`'s data file, as ``FileSystem/stamp(at:)`` gives it.
    func dataStamp(of file: RecordFile) throws(FlatCacheError) -> FileStamp? {
        let path = file.path
        let folderLength = path.utf8.count - file.name.utf8.count - 1
        guard folderLength > 0 else { return try FileSystem.stamp(at: path) }
        guard let descriptor = descriptor(forFolderOf: path, length: folderLength) else {
            return try FileSystem.stamp(at: path)
        }
        var info = stat()
        let found = file.name.withCString { fstatat(descriptor, $0, &info, AT_SYMLINK_NOFOLLOW) } == 0
        if found { return info.st_mode & S_IFMT == S_IFREG ? FileStamp(info) : nil }
        // Nothing there through the descriptor (or it failed): the path decides, and a folder
        // replaced since it was opened is opened again.
        let stamp = try FileSystem.stamp(at: path)
        if stamp != nil { retire(descriptor) }
        return stamp
    }

    /// The descriptor of the folder that is the first `length` bytes of `path`, opened when first needed.
    private func descriptor(forFolderOf path: String, length: Int) -> Int32? {
        let known = lock.withLock {
            handles.first { $0.folder.utf8.count == length && path.utf8.starts(with: $0.folder.utf8) }?.descriptor
        }
        if let known { return known }
        let folder = String(decoding: path.utf8.prefix(length), as: UTF8.self)
        // O_NOFOLLOW: a link where a cache folder belongs is removed at open, never followed.
        let opened = open(folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard opened >= 0 else { return nil }
        let kept = lock.withLock { () -> Int32? in
            if let raced = handles.first(where: { $0.folder == folder }) { return raced.descriptor }
            guard handles.count < Self.limit else { return nil }
            handles.append((folder, opened))
            return opened
        }
        if kept != opened { close(opened) }
        return kept
    }

    /// Stops using `descriptor`, so that its folder is opened again when next needed.
    private func retire(_ descriptor: Int32) {
        lock.withLock {
            guard let index = handles.firstIndex(where: { $0.descriptor == descriptor }) else { return }
            handles.remove(at: index)
            retired.append(descriptor)
        }
    }
}
