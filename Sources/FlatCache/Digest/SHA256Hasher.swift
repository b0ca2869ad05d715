import Foundation

#if canImport(CryptoKit)
import CryptoKit
#elseif canImport(COpenSSL)
import COpenSSL
#endif

/// SHA256 fed piece by piece, whose state can be kept and continued later:
/// after hashing a file's bytes once, the digest of the file with lines
/// appended costs a hash of the new lines only.
///
/// A value type: a copy continues on its own (`finalize()` hashes a copy, so
/// the state can take more bytes afterwards). CryptoKit's `SHA256` on Apple
/// platforms, OpenSSL's EVP interface (`EVP_MD_CTX_copy_ex`) elsewhere.
struct SHA256Hasher: Sendable {
    #if canImport(CryptoKit)
    private var state = CryptoKit.SHA256()
    #else
    private var state = Context()
    #endif

    /// The number of bytes hashed so far.
    private(set) var byteCount = 0

    /// A hasher that has seen no bytes.
    init() {}

    /// Adds `data` to the bytes hashed.
    mutating func update(_ data: some ContiguousBytes) {
        data.withUnsafeBytes { buffer in
            byteCount += buffer.count
            #if canImport(CryptoKit)
            state.update(bufferPointer: buffer)
            #else
            if !isKnownUniquelyReferenced(&state) { state = state.copy() }
            state.update(buffer)
            #endif
        }
    }

    /// The digest of every byte added so far; the hasher can go on.
    func finalize() -> SHA256Digest {
        #if canImport(CryptoKit)
        SHA256Digest(bytes: Array(state.finalize()))
        #else
        SHA256Digest(bytes: state.copy().finalize())
        #endif
    }

    #if !canImport(CryptoKit)
    /// An `EVP_MD_CTX`, owned: freed with the last reference, copied before a shared one changes.
    private final class Context: @unchecked Sendable {
        // Only mutated while uniquely referenced (see `update`), or as a private copy.
        private let context: OpaquePointer

        init() {
            // Allocation or SHA256 itself missing from OpenSSL cannot be handled here.
            guard let context = EVP_MD_CTX_new(), EVP_DigestInit_ex(context, OpenSSLDigest.sha256, nil) == 1 else {
                preconditionFailure("OpenSSL could not start a SHA256 digest")
            }
            self.context = context
        }

        private init(copying other: OpaquePointer) {
            guard let context = EVP_MD_CTX_new(), EVP_MD_CTX_copy_ex(context, other) == 1 else {
                preconditionFailure("OpenSSL could not copy a SHA256 digest state")
            }
            self.context = context
        }

        deinit { EVP_MD_CTX_free(context) }

        func copy() -> Context { Context(copying: context) }

        func update(_ buffer: UnsafeRawBufferPointer) {
            guard let base = buffer.baseAddress, !buffer.isEmpty else { return }
            precondition(EVP_DigestUpdate(context, base, buffer.count) == 1, "OpenSSL's EVP_DigestUpdate failed")
        }

        /// Ends this context's digest; call on a private copy.
        func finalize() -> [UInt8] {
            var output = [UInt8](repeating: 0, count: SHA256Digest.byteCount)
            precondition(EVP_DigestFinal_ex(context, &output, nil) == 1, "OpenSSL's EVP_DigestFinal_ex failed")
            return output
        }
    }
    #endif
}
