public import Foundation

/// Everything that can go wrong in FlatCache, each case with the context to act on it.
///
/// Match on the cases, not on ``description``: the sentences may change.
///
/// ```swift
/// do {
///     try await cache.messages.save(fetched)
/// } catch FlatCacheError.fileSystem(.write, let path, .ENOSPC) {
///     showDiskFullBanner(path)
/// }
/// ```
///
/// A corrupt file is not an error: a load treats it as a cache miss, moves it
/// into the `quarantine` folder and logs a warning (see ``Configuration/logger``).
public enum FlatCacheError: Error, Sendable, CustomStringConvertible {
    /// A channel URL was the empty string.
    case emptyChannelURL
    /// A user id was the empty string.
    case emptyUserID
    /// A page was asked for with a negative `limit`.
    case invalidLimit(Int)
    /// A ``Configuration`` value is out of range; the reason names it.
    case invalidConfiguration(reason: String)
    /// A message handed to a call about one channel belongs to another.
    case messageInWrongChannel(messageID: Int64, channelURL: String, expectedChannelURL: String)
    /// As ``messageInWrongChannel(messageID:channelURL:expectedChannelURL:)``,
    /// for a record type whose ids are not `Int64`: `messageID` is the id as text.
    case misplacedMessage(messageID: String, channelURL: String, expectedChannelURL: String)
    /// The folder's `format` marker names a version this build cannot read.
    case unsupportedFormat(marker: String, directory: URL)
    /// The cache path exists but is a file, not a folder.
    case notADirectory(URL)
    /// The folder holds other files but no `format` marker (or, read-only, has no
    /// marker at all): it is not a cache, and FlatCache will not write into (or
    /// later clear) someone else's folder.
    case notACacheDirectory(URL)
    /// The operating system refused a file operation.
    case fileSystem(FileOperation, path: String, code: POSIXErrorCode)
    /// A record's `serialize()` threw.
    case serializationFailed(recordType: String, underlying: any Error)
    /// A write was asked of a cache that only reads: opened with
    /// ``Configuration/readOnly``, or in a folder FlatCache cannot write.
    case readOnlyCache(URL)
    /// The folder was written with other record types than the ones it is
    /// opened with (an app that switched SDKs, say). Nothing was read or
    /// moved: open it with the `cached` types, convert it with
    /// ``ChatCache/migrate(message:channel:user:)``, or start over with
    /// ``Configuration/eraseOnRecordTypeChange``.
    case recordTypeMismatch(directory: URL, cached: RecordTypes, requested: RecordTypes)
    /// A conversion closure given to ``ChatCache/migrate(message:channel:user:)`` threw;
    /// the folder is unchanged.
    case conversionFailed(recordType: String, underlying: any Error)
    /// A source an app implements over its chat server (a ``UserSource``,
    /// ``MessageSource`` or ``ChannelSource``) threw, or was cancelled, during
    /// `operation`. The cache is intact: nothing of the failed step was
    /// written, and what earlier steps of the same call wrote (a change log's
    /// first pages) is true of the server.
    case sourceFailed(operation: String, underlying: any Error)
    /// A call on a ``MessageCollection`` or ``ChannelListCollection`` after
    /// its `dispose()`, or cut short by it.
    case collectionDisposed
    /// No entry of the ``Outbox`` has this request id: it was sent, cancelled, or never queued.
    case outboxEntryNotFound(requestID: String)
    /// The ``Outbox`` entry is being sent: it cannot be cancelled or edited
    /// now, as the server may already have it. Try again once its send ends.
    case outboxEntrySending(requestID: String)
    /// A request id was the empty string.
    case emptyRequestID
    /// A name given to `ChatCache(name:)` or `ChatCache.open(name:)` cannot
    /// be one folder's name: it is empty, `.` or `..`, or holds a `/` or a NUL.
    case invalidCacheName(String)
    /// ``Configuration/encryption`` holds a key that is not 32 bytes.
    case invalidEncryptionKey(byteCount: Int)
    /// The folder is encrypted (with the key `keyID`) and the cache was opened without a key.
    case encryptionKeyRequired(directory: URL, keyID: String)
    /// The folder is encrypted with the key `keyID`, not with the one given (`given` is its id).
    case wrongEncryptionKey(directory: URL, keyID: String, given: String)
    /// The folder holds plain data and the cache was opened with a key: open
    /// it without one and ``ChatCache/migrate(encryption:)`` it.
    case folderNotEncrypted(URL)
    /// The folder's `rekey` file, which says a key change is under way, is not in its form.
    case unreadableKeyChange(URL)

    /// The file operations FlatCache performs, named in ``FlatCacheError/fileSystem(_:path:code:)``.
    public enum FileOperation: String, Sendable {
        /// Opening a file to read or write it.
        case open
        /// Reading a file's bytes or attributes.
        case read
        /// Writing bytes to a temporary file.
        case write
        /// Flushing a file or folder to stable storage (`fsync`).
        case sync
        /// Renaming a file over its target, or moving it aside.
        case rename
        /// Removing a file or folder.
        case remove
        /// Creating a folder.
        case createDirectory
        /// Listing a folder.
        case listDirectory
        /// Setting a file's or folder's attributes: its Data Protection class
        /// or its exclusion from backups (Apple platforms).
        case setAttributes
    }

    /// A sentence that says what went wrong.
    public var description: String {
        switch self {
        case .emptyChannelURL:
            "A channel URL must not be empty."
        case .emptyUserID:
            "A user id must not be empty."
        case .invalidLimit(let limit):
            "A page limit must be 0 or more, not \(limit)."
        case .invalidConfiguration(let reason):
            "Invalid configuration: \(reason)."
        case .messageInWrongChannel(let id, let url, let expected):
            "Message \(id) belongs to channel '\(url)', not to '\(expected)'."
        case .misplacedMessage(let id, let url, let expected):
            "Message \(id) belongs to channel '\(url)', not to '\(expected)'."
        case .unsupportedFormat(let marker, let directory):
            "The cache at \(directory.path) has format marker '\(marker)'; this FlatCache reads 'flatcache 1' and 'flatcache 2' only."
        case .notADirectory(let url):
            "\(url.path) is a file, not a folder: a cache needs a folder."
        case .notACacheDirectory(let url):
            "\(url.path) is not a FlatCache folder: it has no 'format' marker."
        case .fileSystem(let operation, let path, let code):
            "Could not \(operation.verb) \(path): \(String(cString: strerror(code.rawValue)))."
        case .serializationFailed(let type, let underlying):
            "Could not serialize a \(type): \(sentence(underlying))"
        case .readOnlyCache(let url):
            "The cache at \(url.path) is read-only: it can be loaded, not written."
        case .recordTypeMismatch(let directory, let cached, let requested):
            "The cache at \(directory.path) holds \(cached), not \(requested): open it with its own types, migrate it, or erase it."
        case .conversionFailed(let type, let underlying):
            "Could not convert a \(type): \(sentence(underlying))"
        case .sourceFailed(let operation, let underlying):
            "The source failed to \(operation); the cache is intact: \(sentence(underlying))"
        case .collectionDisposed:
            "The collection was disposed; create a new one."
        case .outboxEntryNotFound(let requestID):
            "No outbox entry has the request id '\(requestID)': it was sent, cancelled, or never queued."
        case .outboxEntrySending(let requestID):
            "The outbox entry '\(requestID)' is being sent; try again once its send ends."
        case .emptyRequestID:
            "The request id is empty."
        case .invalidEncryptionKey(let count):
            "An AES-256-GCM key is 32 bytes, not \(count)."
        case .encryptionKeyRequired(let directory, let keyID):
            "The cache at \(directory.path) is encrypted with key \(keyID): open it with that key."
        case .wrongEncryptionKey(let directory, let keyID, let given):
            "The cache at \(directory.path) is encrypted with key \(keyID), not with the key given (\(given)); nothing was read or changed."
        case .folderNotEncrypted(let url):
            "The cache at \(url.path) is not encrypted: open it without a key and migrate it to encrypt it."
        case .unreadableKeyChange(let url):
            "The cache at \(url.path) has a key change under way whose 'rekey' file cannot be read."
        case .invalidCacheName(let name):
            "'\(name.replacingOccurrences(of: "\0", with: "\\0"))' cannot name a cache folder: a name must not be empty, '.' or '..', nor hold '/' or NUL."
        }
    }
}

/// An underlying error's description, ending with one period.
private func sentence(_ error: any Error) -> String {
    let text = "\(error)"
    return text.hasSuffix(".") ? text : text + "."
}

extension FlatCacheError.FileOperation {
    fileprivate var verb: String {
        switch self {
        case .open: "open"
        case .read: "read"
        case .write: "write"
        case .sync: "sync"
        case .rename: "rename"
        case .remove: "remove"
        case .createDirectory: "create the folder"
        case .listDirectory: "list"
        case .setAttributes: "set the attributes of"
        }
    }
}
