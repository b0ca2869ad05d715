import Foundation

/// The `.sha256` file beside a data file: one line in `sha256sum` format,
/// `<64 lowercase hex digits><two spaces><data file name>\n`, so
/// `sha256sum -c *.sha256` checks a cache folder with standard tools.
enum Sidecar {
    /// The sidecar bytes for a data file called `name` whose digest is `digest`.
    static func contents(digest: SHA256Digest, name: String) -> Data {
        var line = Data(digest.hexUTF8)
        line.append(contentsOf: "  \(name)\n".utf8)
        return line
    }

    /// The digest a sidecar records for the data file called `name`.
    ///
    /// - Throws: ``Corruption/malformedSidecar`` unless `contents` is exactly
    ///   one `sha256sum` line naming `name`.
    static func digest(in contents: Data, name: String) throws(Corruption) -> SHA256Digest {
        let hexLength = SHA256Digest.byteCount * 2
        let expectedTail = Data("  \(name)\n".utf8)
        guard contents.count == hexLength + expectedTail.count,
            contents.suffix(expectedTail.count).elementsEqual(expectedTail),
            let digest = SHA256Digest(hex: contents.prefix(hexLength))
        else { throw .malformedSidecar }
        return digest
    }
}
