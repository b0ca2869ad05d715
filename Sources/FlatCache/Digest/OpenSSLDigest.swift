#if !canImport(CryptoKit) && canImport(COpenSSL)
import COpenSSL

/// OpenSSL's SHA256, set up once without libcrypto's exit-time cleanup:
/// when a process exits while a write-behind flush still hashes on another
/// thread, that cleanup would free the tables the flush is reading (a crash
/// at exit, seen under ThreadSanitizer). The memory is the process's to
/// give back at exit anyway.
enum OpenSSLDigest {
    /// `EVP_sha256()`, after `OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT)`.
    nonisolated(unsafe) static let sha256: OpaquePointer? = {
        _ = OPENSSL_init_crypto(UInt64(OPENSSL_INIT_NO_ATEXIT), nil)
        return EVP_sha256()
    }()
}
#endif
