import Foundation

/// A copy of a store as it was saved, before anything indexed it: put back
/// before each build from scratch, so that no index exists then, in memory
/// or on disk, whatever files an engine keeps it in.
struct PristineCopy {
    /// The store: a folder or a file.
    let original: URL
    /// Where the copy lives, beside it.
    let copy: URL

    init(of original: URL) {
        self.original = original
        copy = original.deletingLastPathComponent().appendingPathComponent(original.lastPathComponent + ".pristine")
    }

    /// Copies the store as it is now (closed).
    func take() throws {
        try? FileManager.default.removeItem(at: copy)
        try FileManager.default.copyItem(at: original, to: copy)
    }

    /// Puts the copy back in place of the store (closed), and removes `leftovers` beside it.
    func restore(removing leftovers: [URL] = []) throws {
        guard FileManager.default.fileExists(atPath: copy.path) else {
            throw BenchmarkError("no pristine copy of \(original.path) to start from scratch with")
        }
        for url in [original] + leftovers { try? FileManager.default.removeItem(at: url) }
        try FileManager.default.copyItem(at: copy, to: original)
    }
}
