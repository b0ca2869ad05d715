import Foundation

#if canImport(CryptoKit)
import CryptoKit
#elseif canImport(COpenSSL)
import COpenSSL
#endif

/// AES-256-GCM over many records with one key: each record sealed as
/// `nonce ‖ ciphertext ‖ tag` (12 + n + 16 bytes), the layout of CryptoKit's
/// `AES.GCM.SealedBox.combined`.
///
/// OpenSSL's EVP interface on Linux and Android (one context for a whole
/// batch: the key schedule is set once, then only the nonce changes),
/// CryptoKit on Apple platforms. Not shared between threads: make one per batch.
final class AESGCM {
    /// Bytes of nonce before the ciphertext.
    static let nonceCount = 12
    /// Bytes of tag after it.
    static let tagCount = 16
    /// Bytes a sealed record has beyond its plaintext.
    static let overhead = nonceCount + tagCount

    #if canImport(CryptoKit)
    private let key: SymmetricKey
    #else
    private let context: OpaquePointer
    #endif

    /// A cipher for `key`, which is 32 bytes.
    init(key: [UInt8]) {
        precondition(key.count == 32, "an AES-256 key is 32 bytes")
        #if canImport(CryptoKit)
        self.key = SymmetricKey(data: key)
        #else
        // Allocation or AES-GCM itself missing from OpenSSL cannot be handled here.
        guard let context = EVP_CIPHER_CTX_new() else { preconditionFailure("OpenSSL could not make a cipher context") }
        self.context = context
        // The default IV length of EVP's GCM is 12 bytes, the one the format uses.
        precondition(EVP_CipherInit_ex(context, Self.cipher, nil, key, nil, -1) == 1, "OpenSSL could not set up AES-256-GCM")
        #endif
    }

    #if !canImport(CryptoKit)
    /// AES-256-GCM fetched from OpenSSL's providers once: `EVP_aes_256_gcm()`
    /// looks the implementation up again at every set-up (OpenSSL 3's
    /// "implicit fetch"), a cost paid per file written or read. Never freed;
    /// an `EVP_CIPHER` is read-only once fetched, safe to share between threads.
    nonisolated(unsafe) private static let cipher: OpaquePointer = {
        guard let cipher = EVP_CIPHER_fetch(nil, "AES-256-GCM", nil) else {
            preconditionFailure("OpenSSL has no AES-256-GCM")
        }
        return cipher
    }()
    #endif

    #if !canImport(CryptoKit)
    deinit { EVP_CIPHER_CTX_free(context) }
    #endif

    /// Seals `plaintext` with `nonce` (12 bytes) and `associatedData`, writing
    /// `nonce ‖ ciphertext ‖ tag` at `output` (room for `plaintext.count + overhead`).
    func seal(
        _ plaintext: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer,
        into output: UnsafeMutableRawPointer
    ) {
        #if canImport(CryptoKit)
        // The nonce is 12 bytes and the key 32, so neither call can fail.
        let box = try! AES.GCM.seal(
            plaintext, using: key, nonce: try! AES.GCM.Nonce(data: nonce), authenticating: associatedData)
        box.combined!.copyBytes(to: output.assumingMemoryBound(to: UInt8.self), count: plaintext.count + Self.overhead)
        #else
        let out = output.assumingMemoryBound(to: UInt8.self)
        output.copyMemory(from: nonce.baseAddress!, byteCount: Self.nonceCount)
        var length: Int32 = 0
        var succeeded = EVP_CipherInit_ex(context, nil, nil, nil, nonce.baseAddress!.assumingMemoryBound(to: UInt8.self), 1) == 1
        succeeded = succeeded && update(nil, &length, associatedData)
        succeeded = succeeded && update(out + Self.nonceCount, &length, plaintext)
        var final: Int32 = 0
        succeeded = succeeded && EVP_CipherFinal_ex(context, out + Self.nonceCount + Int(length), &final) == 1
        succeeded =
            succeeded
            && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_GET_TAG, Int32(Self.tagCount), out + Self.nonceCount + plaintext.count) == 1
        precondition(succeeded, "OpenSSL's AES-256-GCM encryption failed")
        #endif
    }

    /// Opens `sealed` (`nonce ‖ ciphertext ‖ tag`) with `associatedData`,
    /// writing the plaintext at `output` (room for `sealed.count - overhead`).
    ///
    /// - Returns: Whether it opened: `false` when the tag does not match (another
    ///   key, other associated data, or a changed byte) or `sealed` is too short.
    func open(
        _ sealed: UnsafeRawBufferPointer, associatedData: UnsafeRawBufferPointer, into output: UnsafeMutableRawPointer
    ) -> Bool {
        guard sealed.count >= Self.overhead else { return false }
        #if canImport(CryptoKit)
        guard let box = try? AES.GCM.SealedBox(combined: sealed),
            let plaintext = try? AES.GCM.open(box, using: key, authenticating: associatedData)
        else { return false }
        plaintext.copyBytes(to: output.assumingMemoryBound(to: UInt8.self), count: plaintext.count)
        return true
        #else
        let base = sealed.baseAddress!.assumingMemoryBound(to: UInt8.self)
        let cipherCount = sealed.count - Self.overhead
        let out = output.assumingMemoryBound(to: UInt8.self)
        var length: Int32 = 0
        guard EVP_CipherInit_ex(context, nil, nil, nil, base, 0) == 1,
            update(nil, &length, associatedData),
            update(out, &length, UnsafeRawBufferPointer(start: base + Self.nonceCount, count: cipherCount)),
            EVP_CIPHER_CTX_ctrl(
                context, EVP_CTRL_AEAD_SET_TAG, Int32(Self.tagCount), UnsafeMutableRawPointer(mutating: base + Self.nonceCount + cipherCount))
                == 1
        else { return false }
        var final: Int32 = 0
        return EVP_CipherFinal_ex(context, out + Int(length), &final) == 1
        #endif
    }

    #if !canImport(CryptoKit)
    /// One `EVP_CipherUpdate` (associated data when `output` is nil); an empty input is skipped.
    private func update(_ output: UnsafeMutablePointer<UInt8>?, _ length: inout Int32, _ input: UnsafeRawBufferPointer) -> Bool {
        length = 0
        guard let base = input.baseAddress, !input.isEmpty else { return true }
        return EVP_CipherUpdate(context, output, &length, base.assumingMemoryBound(to: UInt8.self), Int32(input.count)) == 1
    }
    #endif
}

/// HMAC-SHA256 (RFC 2104): OpenSSL's one-shot `HMAC` on Linux and Android, CryptoKit on Apple platforms.
enum HMACSHA256 {
    /// The 32-byte code of `message` under `key`.
    static func code(key: [UInt8], message: Data) -> [UInt8] {
        #if canImport(CryptoKit)
        return Array(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key)))
        #else
        var output = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let succeeded = message.withUnsafeBytes { input in
            withUnsafePointer(to: UInt8(0)) { empty in
                HMAC(
                    EVP_sha256(), key, Int32(key.count), input.baseAddress?.assumingMemoryBound(to: UInt8.self) ?? empty,
                    input.count, &output, &length) != nil
            }
        }
        precondition(succeeded && length == 32, "OpenSSL's HMAC(SHA256) failed")
        return output
        #endif
    }
}

/// Cryptographically secure random bytes: `RAND_bytes` on Linux and Android, the system generator on Apple platforms.
enum SecureRandom {
    /// `count` random bytes at `output`.
    static func fill(_ output: UnsafeMutableRawBufferPointer) {
        guard let base = output.baseAddress, !output.isEmpty else { return }
        #if canImport(CryptoKit)
        // Cryptographically secure on Apple platforms (arc4random_buf).
        var generator = SystemRandomNumberGenerator()
        for index in 0..<output.count { base.storeBytes(of: UInt8.random(in: .min ... .max, using: &generator), toByteOffset: index, as: UInt8.self) }
        #else
        precondition(RAND_bytes(base.assumingMemoryBound(to: UInt8.self), Int32(output.count)) == 1, "OpenSSL's RAND_bytes failed")
        #endif
    }
}
