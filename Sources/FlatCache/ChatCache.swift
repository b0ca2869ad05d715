public import Foundation

/// An offline cache of a chat app's channels, messages and users, kept as
/// plain files in one folder.
///
/// Open it once and share it: it is `Sendable`, and every call is safe from
/// any thread. Several instances, and several processes (an app and its
/// extension), may use one folder at once: writes to one file never
/// interleave. Loads return what was cached (a corrupt file reads as a
/// miss); saves write only what changed.
///
/// ```swift
/// let cache = try ChatCache(directory: cachesFolder.appending(path: "chat"))
/// let offline = try cache.messages.load(in: channelURL)   // show at once
/// let fresh = try await api.fetchMessages(channelURL)
/// try cache.messages.replace(fresh, in: channelURL)       // then replace
/// ```
///
/// `ChatCache(directory:)` uses the built-in ``ChatMessage``, ``ChatChannel``
/// and ``ChatUser``. To cache your chat SDK's own types, conform them to
/// ``MessageRecord``, ``ChannelRecord`` and ``UserRecord`` and name them:
/// `ChatCache<SDKMessage, SDKChannel, SDKUser>(directory: folder)`.
public final class ChatCache<Message: MessageRecord, Channel: ChannelRecord, User: UserRecord>: Sendable {
    /// The cache folder.
    public let directory: URL
    /// The settings it was opened with.
    public let configuration: Configuration
    /// The messages, one file per channel.
    public let messages: MessageStore<Message>
    /// The group channels.
    public let channels: ChannelStore<Channel>
    /// The users.
    public let users: UserStore<User>

    let layout: CacheLayout
    let storage: RecordStorage

    /// Opens the cache in `directory`, creating the folder when it is missing.
    ///
    /// ```swift
    /// let cache = try ChatCache<SDKMessage, SDKChannel, SDKUser>(directory: folder)
    /// ```
    /// - important: Requires disk I/O.
    /// - Parameters:
    ///   - directory: A folder that is empty, missing, or a FlatCache folder.
    ///   - configuration: Retention, durability and logging.
    /// - Throws: ``FlatCacheError/invalidConfiguration(reason:)``,
    ///   ``FlatCacheError/notADirectory(_:)``, ``FlatCacheError/notACacheDirectory(_:)``,
    ///   ``FlatCacheError/unsupportedFormat(marker:directory:)``, or a file-system error
    ///   (a folder that cannot be created or written).
    public convenience init(directory: URL, configuration: Configuration = Configuration()) throws(FlatCacheError) {
        try self.init(opening: directory, configuration: configuration)
    }

    // One designated initializer behind both public ones, so the built-in
    // models' overload (in the extension below) cannot call itself.
    fileprivate init(opening directory: URL, configuration: Configuration) throws(FlatCacheError) {
        try configuration.validate()
        let synchronized = configuration.durability == .synchronized
        try FormatMarker.prepare(CacheLayout(root: directory.path), directory: directory, synchronized: synchronized)
        // One spelling per file (no links, no "..") so every instance picks the same lock for it.
        let layout = CacheLayout(root: try FileSystem.canonicalPath(of: directory.path))
        let storage = RecordStorage(
            synchronized: synchronized, quarantine: layout.quarantine,
            logger: configuration.logger,
            locks: LockStripes.shared(forFolder: layout.root, lockFilePath: layout.formatMarkerPath))
        self.directory = directory
        self.configuration = configuration
        self.layout = layout
        self.storage = storage
        messages = MessageStore(storage: storage, layout: layout, maxPerChannel: configuration.maxMessagesPerChannel)
        channels = ChannelStore(storage: storage, layout: layout)
        users = UserStore(storage: storage, layout: layout)
    }

    /// Removes every cached channel, message and user, and the quarantine
    /// folder: what an app does when its user logs out. The folder stays a cache.
    ///
    /// Waits for calls in progress to finish and holds off new ones until done.
    /// - important: Requires disk I/O.
    /// - Throws: A file-system error.
    public func removeAll() throws(FlatCacheError) {
        try storage.locks.withAllLocks { () throws(FlatCacheError) in
            try layout.channelsFile.remove()
            try layout.usersFile.remove()
            try FileSystem.removeDirectory(at: layout.messagesDirectory)
            try FileSystem.removeDirectory(at: layout.quarantine.directory)
        }
    }
}

extension ChatCache where Message == ChatMessage, Channel == ChatChannel, User == ChatUser {
    /// Opens the cache in `directory` for the built-in ``ChatMessage``,
    /// ``ChatChannel`` and ``ChatUser`` models.
    ///
    /// ```swift
    /// let cache = try ChatCache(directory: folder)
    /// ```
    /// - important: Requires disk I/O.
    /// - Parameters:
    ///   - directory: A folder that is empty, missing, or a FlatCache folder.
    ///   - configuration: Retention, durability and logging.
    /// - Throws: ``FlatCacheError/invalidConfiguration(reason:)``,
    ///   ``FlatCacheError/notADirectory(_:)``, ``FlatCacheError/notACacheDirectory(_:)``,
    ///   ``FlatCacheError/unsupportedFormat(marker:directory:)``, or a file-system error
    ///   (a folder that cannot be created or written).
    public convenience init(directory: URL, configuration: Configuration = Configuration()) throws(FlatCacheError) {
        try self.init(opening: directory, configuration: configuration)
    }
}
