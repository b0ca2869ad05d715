import Foundation

/// Bytes this process has handed to `write(2)`, `pwrite(2)` and their kin so
/// far: the `wchar` line of `/proc/self/io` (Linux). Every file system, every
/// thread, every file: a store's data files, sidecars, journals and WAL alike.
///
/// Not `write_bytes`: that counts each page once when it is dirtied and
/// takes back the pages of files deleted before writeback, so an SQLite page
/// rewritten ten times, or a file replaced by rename, would read as less
/// than was written. `nil` where `/proc/self/io` does not exist.
package enum WrittenBytes {
    /// The count so far, or `nil` on a system without `/proc/self/io`.
    package static func current() -> Int? {
        #if canImport(Glibc) || canImport(Musl)
            // Reading the file reads, never writes: `wchar` is left as it was.
            guard let text = try? String(contentsOfFile: "/proc/self/io", encoding: .utf8) else { return nil }
            for line in text.split(separator: "\n") where line.hasPrefix("wchar:") {
                return Int(line.dropFirst("wchar:".count).trimmingCharacters(in: .whitespaces))
            }
            return nil
        #else
            return nil
        #endif
    }
}
