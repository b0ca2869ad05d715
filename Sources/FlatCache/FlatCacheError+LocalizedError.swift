public import Foundation

/// `LocalizedError`, so that `error.localizedDescription` (and SwiftUI's
/// alerts, which show it) reads the sentence of ``FlatCacheError/description``
/// rather than "FlatCache.FlatCacheError error 13". The sentences are English.
extension FlatCacheError: LocalizedError {
    /// The sentence of ``description``.
    public var errorDescription: String? { description }

    /// What the app or its user can do about it, where there is something.
    public var recoverySuggestion: String? {
        switch self {
        case .fileSystem(_, _, .ENOSPC), .fileSystem(_, _, .EDQUOT):
            "Free some storage space, then try again."
        case .fileSystem(_, _, .EACCES), .fileSystem(_, _, .EPERM), .fileSystem(_, _, .EROFS), .readOnlyCache:
            "Open the cache in a folder the app can write."
        case .unsupportedFormat:
            "Update the app, or open the cache in another folder."
        case .notADirectory, .notACacheDirectory:
            "Open the cache in an empty folder or in one FlatCache made."
        case .recordTypeMismatch:
            "Open the folder with the record types that wrote it, migrate it, or erase it."
        case .sourceFailed:
            "Check the connection, then sync again."
        case .collectionDisposed:
            "Create a new collection."
        case .outboxEntrySending:
            "Try again once the message's send ends."
        case .invalidEncryptionKey:
            "Make a key of 32 random bytes (Encryption.randomKey()) and keep it in the Keychain."
        case .encryptionKeyRequired, .wrongEncryptionKey:
            "Open the cache with the key it was encrypted with; without it, erase the folder and start over."
        case .folderNotEncrypted:
            "Open the cache without a key, then migrate it to the encryption you want."
        case .invalidCacheName:
            "Name the cache with one folder name, such as \"chat\" or the signed-in account's id."
        default:
            nil
        }
    }
}
