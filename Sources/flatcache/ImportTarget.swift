import Foundation

/// The folder an import writes into, checked before anything is written.
///
/// The library refuses a file, a foreign folder or a newer format when it opens
/// the cache, before it writes; this adds what it would only find at the first
/// save: a folder that cannot be written, or a `messages` folder inside it that cannot.
///
/// ```swift
/// try ImportTarget(path: "Preloaded.cache").check()
/// ```
struct ImportTarget {
    /// The cache folder, as given.
    let path: String

    /// - Throws: ``ToolError`` when the folder exists and cannot be written.
    func check() throws(ToolError) {
        var status = stat()
        guard stat(path, &status) == 0 else { return }  // missing: the library creates it, or says why not
        guard status.st_mode & S_IFMT == S_IFDIR else { throw ToolError("\(path) is a file, not a folder: a cache needs a folder.") }
        for folder in [path, path + "/messages"] where access(folder, F_OK) == 0 {
            guard access(folder, W_OK | X_OK) == 0 else {
                throw ToolError("Cannot write into \(folder): \(String(cString: strerror(errno))).")
            }
        }
    }
}
