import Foundation

#if canImport(CryptoKit)
import CryptoKit
#elseif canImport(COpenSSL)
import COpenSSL
#else
#error("FlatCache needs CryptoKit (Apple platforms) or OpenSSL's libcrypto (install libssl-dev).")
#endif

/// The SHA256 digest of some bytes, kept as its 32 raw bytes.
///
/// One small type hides where the hash comes from: CryptoKit on Apple
/// platforms, OpenSSL's libcrypto (one-shot `EVP_Digest`) elsewhere.
struct SHA256Digest: Hashable, Sendable, CustomStringConvertible {
    /// The number of bytes in a digest.
    static let byteCount = 32

    /// The digest's bytes, `byteCount` of them.
    let bytes: [UInt8]

    /// Hashes `data` in one call.
    init(of data: some ContiguousBytes) {
        #if canImport(CryptoKit)
        bytes = Array(CryptoKit.SHA256.hash(data: data))
        #else
        var output = [UInt8](repeating: 0, count: Self.byteCount)
        let succeeded = data.withUnsafeBytes { input in
            output.withUnsafeMutableBufferPointer { out in
                // An empty input may have a nil base address; OpenSSL wants a valid pointer.
                withUnsafePointer(to: UInt8(0)) { empty in
                    EVP_Digest(
                        input.baseAddress ?? UnsafeRawPointer(empty), input.count,
                        out.baseAddress, nil, OpenSSLDigest.sha256, nil) == 1
                }
            }
        }
        // EVP_Digest fails only when OpenSSL cannot allocate or lost its SHA256 provider.
        precondition(succeeded, "OpenSSL's EVP_Digest(SHA256) failed")
        bytes = output
        #endif
    }

    /// A digest from its `byteCount` raw bytes.
    init(bytes: [UInt8]) {
        precondition(bytes.count == Self.byteCount, "a SHA256 digest has 32 bytes")
        self.bytes = bytes
    }

    /// Parses 64 lowercase hexadecimal digits; anything else gives `nil`.
    init?(hex: some Collection<UInt8>) {
        guard hex.count == Self.byteCount * 2 else { return nil }
        var result = [UInt8]()
        result.reserveCapacity(Self.byteCount)
        var high: UInt8?
        for character in hex {
            guard let nibble = Self.nibble(character) else { return nil }
            if let h = high {
                result.append(h << 4 | nibble)
                high = nil
            } else {
                high = nibble
            }
        }
        bytes = result
    }

    /// The 64 lowercase hexadecimal digits, as in `sha256sum` output.
    var hex: String {
        String(decoding: hexUTF8, as: UTF8.self)
    }

    /// The 64 lowercase hexadecimal digits as ASCII bytes.
    var hexUTF8: [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(Self.byteCount * 2)
        for byte in bytes {
            out.append(Self.digits[Int(byte >> 4)])
            out.append(Self.digits[Int(byte & 0x0F)])
        }
        return out
    }

    var description: String { hex }

    private static let digits = Array("0123456789abcdef".utf8)

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
