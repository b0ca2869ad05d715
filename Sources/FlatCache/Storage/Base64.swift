import Foundation

#if canImport(CryptoKit)
// Apple platforms: Foundation's codec (no OpenSSL there).
#elseif canImport(COpenSSL)
import COpenSSL
#endif

/// Standard Base64 (RFC 4648, padded, no line breaks) for one record at a
/// time, written into buffers the caller owns.
///
/// OpenSSL's `EVP_EncodeBlock` and `EVP_DecodeBlock` on Linux (about 2.5x
/// faster than Foundation's, and no allocation per record); Foundation's
/// codec on Apple platforms.
enum Base64 {
    /// How many characters `byteCount` bytes encode to.
    static func encodedCount(of byteCount: Int) -> Int {
        (byteCount + 2) / 3 * 4
    }

    /// The most bytes `characterCount` characters can decode to.
    static func maximumDecodedCount(of characterCount: Int) -> Int {
        characterCount / 4 * 3
    }

    /// Writes the Base64 form of `input` at `output`, which has room for
    /// `encodedCount(of: input.count) + 1` bytes; returns the characters written.
    static func encode(_ input: UnsafeRawBufferPointer, into output: UnsafeMutablePointer<UInt8>) -> Int {
        guard !input.isEmpty else { return 0 }
        #if canImport(CryptoKit)
        let encoded = Data(input).base64EncodedData()
        encoded.copyBytes(to: output, count: encoded.count)
        return encoded.count
        #else
        // Writes a terminating NUL after the characters, hence the extra byte of room.
        return Int(EVP_EncodeBlock(output, input.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(input.count)))
        #endif
    }

    /// Decodes one line of standard Base64 at `output`, which has room for
    /// `maximumDecodedCount(of: line.count)` bytes; returns the bytes written,
    /// or `nil` when the line is not strictly standard Base64.
    static func decode(_ line: UnsafeRawBufferPointer, into output: UnsafeMutablePointer<UInt8>) -> Int? {
        let count = line.count
        guard count > 0 else { return 0 }
        // OpenSSL trims white space around the input and tolerates a stray
        // "="; FlatCache's lines have neither, so check before calling it.
        guard count % 4 == 0, isAlphabet(line[0]), line[count - 1] == equals || isAlphabet(line[count - 1]) else {
            return nil
        }
        let padding = line[count - 1] == equals ? (line[count - 2] == equals ? 2 : 1) : 0
        if let firstEquals = memchr(line.baseAddress!, Int32(equals), count),
            line.baseAddress!.distance(to: firstEquals) < count - padding
        {
            return nil
        }
        // Canonical only (RFC 4648 3.5): the bits that padding leaves over must be
        // zero, or "AC==" would decode like "AA==" and one record have two lines.
        if padding > 0, let last = sextet(line[count - 1 - padding]), last & (padding == 1 ? 0x03 : 0x0F) != 0 {
            return nil
        }
        #if canImport(CryptoKit)
        guard let decoded = Data(base64Encoded: Data(line)) else { return nil }
        decoded.copyBytes(to: output, count: decoded.count)
        return decoded.count
        #else
        let written = EVP_DecodeBlock(output, line.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(count))
        guard written >= 0 else { return nil }
        return Int(written) - padding  // EVP_DecodeBlock counts padding as zero bytes
        #endif
    }

    private static let equals = UInt8(ascii: "=")

    /// The 6-bit value of a Base64 character.
    private static func sextet(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): 62
        case UInt8(ascii: "/"): 63
        default: nil
        }
    }

    private static func isAlphabet(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "+"), UInt8(ascii: "/"):
            true
        default:
            false
        }
    }
}
