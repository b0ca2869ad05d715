import Foundation

/// The regular files under a folder and their sizes.
enum FolderFiles {
    /// Each regular file's path relative to `folder`, and its size in bytes.
    static func sizes(in folder: URL) throws -> [String: Int] {
        var sizes = [String: Int]()
        let root = folder.standardizedFileURL.path
        guard let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.fileSizeKey, .isRegularFileKey])
        else { return [:] }
        for case let url as URL in walker {
            let values = try url.resourceValues(forKeys: [.fileSizeKey, .isRegularFileKey])
            guard values.isRegularFile == true else { continue }
            sizes[String(url.standardizedFileURL.path.dropFirst(root.count + 1))] = values.fileSize ?? 0
        }
        return sizes
    }
}
