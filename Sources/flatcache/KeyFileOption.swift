import ArgumentParser
import FlatCache
import Foundation

/// `--key-file <path>`: the key of an encrypted cache folder, for every
/// command that opens one.
///
/// The file holds the key as its 32 raw bytes, or as 64 hex digits (either
/// case), which may be surrounded by whitespace such as a final newline:
///
/// ```
/// head -c 32 /dev/urandom > cache.key                      # raw
/// openssl rand -hex 32 > cache.key                         # hex
/// flatcache info Chat.cache --key-file cache.key
/// ```
struct KeyFileOption: ParsableArguments {
    @Option(
        name: .customLong("key-file"),
        help: ArgumentHelp(
            "The key of an encrypted cache: a file of 32 raw bytes, or of 64 hex digits.", valueName: "path"))
    var path: String?

    /// The encryption the key file gives, or `nil` when none was given.
    ///
    /// - Throws: A ``ToolError`` naming the file when it cannot be read or does not hold a key.
    func encryption() throws(ToolError) -> Encryption? {
        guard let path else { return nil }
        let contents: Data
        do {
            contents = try Self.contents(ofFileAt: path)
        } catch {
            throw ToolError("Cannot read the key file \(path): \(error.description).")
        }
        guard let key = Self.key(in: contents) else {
            throw ToolError(
                "The key file \(path) holds \(plural(contents.count, "byte")), not a key: "
                    + "give 32 raw bytes, or 64 hex digits (a newline after them is fine).")
        }
        return .aes256gcm(key: key)
    }

    /// The key in a key file's bytes: all 32 of them, or 64 hex digits within
    /// whitespace; `nil` for anything else.
    static func key(in contents: Data) -> Data? {
        if contents.count == 32 { return contents }
        let whitespace: Set<UInt8> = [0x20, 0x09, 0x0A, 0x0D]
        let digits = contents.drop { whitespace.contains($0) }.reversed().drop { whitespace.contains($0) }.reversed()
        guard digits.count == 64 else { return nil }
        var key = Data(capacity: 32)
        var high: UInt8?
        for digit in digits {
            guard let value = hexValue(digit) else { return nil }
            if let first = high {
                key.append(first << 4 | value)
                high = nil
            } else {
                high = value
            }
        }
        return key
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The bytes of the regular file at `path`.
    ///
    /// - Throws: The system's reason (such as "No such file or directory"), or that it is not a regular file.
    private static func contents(ofFileAt path: String) throws(ToolError) -> Data {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw ToolError(String(cString: strerror(errno))) }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        var status = stat()
        // A folder, a device or a pipe is not a key file (and /dev/urandom would never end).
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw ToolError("it is not a regular file")
        }
        do {
            return try handle.readToEnd() ?? Data()
        } catch {
            throw ToolError(error.localizedDescription)
        }
    }
}

extension KeyFileOption {
    /// The library's key errors said in the tool's terms (its `--key-file`);
    /// any other error as it is.
    static func explained(_ error: any Error) -> any Error {
        switch error as? FlatCacheError {
        case .encryptionKeyRequired(let directory, let keyID):
            ToolError("The cache at \(directory.path) is encrypted with key \(keyID): give that key with --key-file <path>.")
        case .wrongEncryptionKey(let directory, let keyID, let given):
            ToolError(
                "The cache at \(directory.path) is encrypted with key \(keyID), not with the key in the key file "
                    + "(\(given)); nothing was read or changed.")
        case .folderNotEncrypted(let directory):
            ToolError("The cache at \(directory.path) is not encrypted: run without --key-file.")
        default:
            error
        }
    }
}
