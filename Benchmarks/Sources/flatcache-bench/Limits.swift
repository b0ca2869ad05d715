import CBenchCrypto
import BenchmarkKit
import Foundation

/// What the hardware allows on the same bytes the caches hold: SHA256, Base64
/// and reading files from the page cache, each with OpenSSL in one buffer;
/// and one `fsync`ed file replace.
enum Limits {
    /// The data files in `folder` (recursively), read once into memory.
    static func dataFiles(in folder: URL) throws -> [Data] {
        try dataFilePaths(in: folder).map { try Data(contentsOf: URL(fileURLWithPath: $0)) }
    }

    /// Hashes each file in one call.
    static func sha256(_ files: [Data]) {
        var digest = [UInt8](repeating: 0, count: 32)
        for file in files {
            file.withUnsafeBytes { input in
                _ = EVP_Digest(input.baseAddress, input.count, &digest, nil, EVP_sha256(), nil)
            }
        }
    }

    /// Decodes every Base64 line of each file into one reused buffer.
    static func base64Decode(_ files: [Data]) {
        var output = [UInt8](repeating: 0, count: 1 << 20)
        for file in files {
            file.withUnsafeBytes { (input: UnsafeRawBufferPointer) in
                guard let base = input.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
                var start = 0
                while start < input.count {
                    let end = memchr(base + start, 0x0A, input.count - start).map { UnsafeRawPointer($0) - input.baseAddress! } ?? input.count
                    let length = end - start
                    if output.count < length { output = [UInt8](repeating: 0, count: length) }
                    _ = EVP_DecodeBlock(&output, base + start, Int32(length))
                    start = end + 1
                }
            }
        }
    }

    /// Encodes each file's decoded records back to Base64 lines in one reused buffer.
    static func base64Encode(_ records: [[Data]]) {
        var output = [UInt8](repeating: 0, count: 1 << 21)
        for file in records {
            var offset = 0
            for record in file {
                let needed = offset + (record.count + 2) / 3 * 4 + 2
                if output.count < needed { output += [UInt8](repeating: 0, count: needed) }
                record.withUnsafeBytes { input in
                    output.withUnsafeMutableBufferPointer { buffer in
                        offset += Int(EVP_EncodeBlock(
                            buffer.baseAddress! + offset, input.baseAddress!.assumingMemoryBound(to: UInt8.self),
                            Int32(input.count)))
                        buffer[offset] = 0x0A
                        offset += 1
                    }
                }
            }
        }
    }

    /// Reads each file in `paths` into one reused buffer (from the page cache, as they were just written).
    static func readFiles(_ paths: [String]) {
        var buffer = [UInt8](repeating: 0, count: 1 << 21)
        for path in paths {
            let descriptor = open(path, O_RDONLY)
            guard descriptor >= 0 else { continue }
            while buffer.withUnsafeMutableBytes({ read(descriptor, $0.baseAddress, $0.count) }) > 0 {}
            close(descriptor)
        }
    }

    /// One durable replace of a file of `size` bytes: write a temporary, fsync, rename, fsync the folder.
    static func durableReplace(in folder: URL, size: Int) {
        let bytes = [UInt8](repeating: 0x41, count: size)
        let target = folder.appendingPathComponent("replace.bin").path
        let temporary = folder.appendingPathComponent(".replace.bin.tmp").path
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        fsync(descriptor)
        close(descriptor)
        rename(temporary, target)
        let directory = open(folder.path, O_RDONLY | O_DIRECTORY)
        fsync(directory)
        close(directory)
    }

    /// What replacing one file and its sidecar atomically costs in system
    /// calls alone, without `fsync`: each written to a new temporary file and
    /// renamed over the old one (the floor of any FlatCache rewrite, which
    /// also encodes and hashes). `size` bytes of data and an 80-byte sidecar.
    static func replacePair(in folder: URL, size: Int) {
        let contents = [[UInt8](repeating: 0x41, count: size), [UInt8](repeating: 0x61, count: 80)]
        for (name, bytes) in zip(["pair.lines", "pair.lines.sha256"], contents) {
            let target = folder.appendingPathComponent(name).path
            let temporary = folder.appendingPathComponent("." + name + ".tmp").path
            let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            close(descriptor)
            rename(temporary, target)
        }
    }

    /// The paths of the data files in `folder`.
    static func dataFilePaths(in folder: URL) -> [String] {
        let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil)
        var paths = [String]()
        while let url = walker?.nextObject() as? URL {
            if url.pathExtension == "lines" { paths.append(url.path) }
        }
        return paths.sorted()
    }
}
