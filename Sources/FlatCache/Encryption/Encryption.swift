public import Foundation

/// How a cache encrypts its files at rest (``Configuration/encryption``).
///
/// ```swift
/// var configuration = Configuration()
/// configuration.encryption = .aes256gcm(key: key)   // 32 bytes from the Keychain
/// let cache = try ChatCache(directory: folder, configuration: configuration)
/// ```
///
/// Each record line is then sealed with AES-256-GCM (a random 96-bit nonce
/// per record, the file's name as associated data), and message file names
/// are HMAC-SHA256 of the channel URL under the key, so that a copied or
/// backed-up folder shows neither content nor channel URLs. The `format` and
/// `records` files stay plain; `records` names the key's ``keyID``. The
/// `.sha256` sidecars stay SHA256 of the bytes as stored, so `sha256sum -c`
/// checks them without the key.
///
/// The app keeps the key: on Apple platforms in the Keychain
/// (`kSecClassGenericPassword`, with an accessibility class no looser than
/// the cache folder's ``FileProtection``). A lost key is a lost cache.
public enum Encryption: Sendable, Hashable, CustomStringConvertible {
    /// AES-256-GCM with `key`, which must be 32 bytes (a random key: not a
    /// password). Opening with another length throws
    /// ``FlatCacheError/invalidEncryptionKey(byteCount:)``.
    case aes256gcm(key: Data)

    /// The key's bytes.
    public var key: Data {
        switch self {
        case .aes256gcm(let key): key
        }
    }

    /// The key's id: the first 8 bytes of HMAC-SHA256(key, `flatcache key id`)
    /// in lowercase hex. The folder's `records` file names it, so that a wrong
    /// key is refused at open; it reveals nothing of the key.
    public var keyID: String {
        Sealer.keyID(of: Array(key))
    }

    /// `aes256gcm(key <key id>)`: never the key itself.
    public var description: String {
        "aes256gcm(key \(key.count == 32 ? keyID : "of \(key.count) bytes"))"
    }

    /// A new random key of 32 bytes, from the system's secure generator.
    public static func randomKey() -> Data {
        var key = Data(count: 32)
        key.withUnsafeMutableBytes { SecureRandom.fill($0) }
        return key
    }
}
