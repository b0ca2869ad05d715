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
/// let offline = try await cache.messages.load(in: channelURL)   // show at once
/// let fresh = try await api.fetchMessages(channelURL)
/// try await cache.messages.replace(fresh, in: channelURL)       // then replace
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
    /// The messages the user wrote that have not reached the server yet
    /// (see ``Outbox``; an ``OutboxDelivery`` sends them).
    public let outbox: Outbox<Message>
    /// Finds cached messages by their words, in every channel (see ``MessageSearch``).
    public let search: MessageSearch<Message>
    /// What seeding from ``Configuration/preloadedBundle`` did when the cache
    /// opened; `nil` without a bundle, or when the cache is read-only (it
    /// seeds nothing).
    public let preload: PreloadResult?

    let layout: CacheLayout
    let engine: CacheEngine
    var storage: RecordStorage { engine.storage }

    /// Whether the cache only reads: opened with ``Configuration/readOnly``, or
    /// in a folder FlatCache cannot write (permissions, a read-only mount).
    /// Every write then throws ``FlatCacheError/readOnlyCache(_:)``.
    public var isReadOnly: Bool { storage.isReadOnly }

    /// Opens the cache in `directory`, creating the folder when it is missing.
    ///
    /// ```swift
    /// let cache = try ChatCache<SDKMessage, SDKChannel, SDKUser>(directory: folder)
    /// ```
    ///
    /// The folder remembers the record types that wrote it (its `records`
    /// file); opening it with others throws rather than reading their bytes
    /// as damaged files. A folder that cannot be written opens read-only.
    /// - important: Blocks the calling thread on disk I/O (it may copy a preloaded bundle) and other
    ///   processes' locks: from the main actor or a task, call `ChatCache.open(directory:configuration:)`.
    /// - Parameters:
    ///   - directory: A folder that is empty, missing, or a FlatCache folder
    ///     (with ``Configuration/readOnly``: a FlatCache folder).
    ///   - configuration: Retention, durability, logging, read-only and record-type choices.
    /// - Throws: ``FlatCacheError/invalidConfiguration(reason:)``,
    ///   ``FlatCacheError/notADirectory(_:)``, ``FlatCacheError/notACacheDirectory(_:)``,
    ///   ``FlatCacheError/unsupportedFormat(marker:directory:)``,
    ///   ``FlatCacheError/recordTypeMismatch(directory:cached:requested:)``, or a
    ///   file-system error (a folder that cannot be created or read).
    public convenience init(directory: URL, configuration: Configuration = Configuration()) throws(FlatCacheError) {
        try self.init(opening: directory, configuration: configuration)
    }

    // One designated initializer behind both public ones, so the built-in
    // models' overload (in the extension below) cannot call itself.
    init(opening directory: URL, configuration: Configuration) throws(FlatCacheError) {
        try configuration.validate()
        let sealer = try configuration.encryption.map { (encryption) throws(FlatCacheError) in
            try Sealer(encryption, nonces: configuration.nonceSource)
        }
        let synchronized = configuration.durability == .synchronized
        let writable = try FormatMarker.prepare(
            CacheLayout(root: directory.path), directory: directory, synchronized: synchronized,
            readOnly: configuration.readOnly)
        // One spelling per file (no links, no "..") so every instance picks the same lock for it.
        let layout = CacheLayout(root: try FileSystem.canonicalPath(of: directory.path), sealer: sealer)
        try Self.checkEncryption(layout, directory: directory)
        if writable { try Self.applyFolderAttributes(configuration, to: layout.root) }
        let storage = RecordStorage(
            root: layout.root, directory: directory, recordTypes: Self.recordTypes, synchronized: synchronized,
            isReadOnly: !writable,
            quarantine: layout.quarantine, logger: configuration.logger, onDamagedFile: configuration.onDamagedFile,
            locks: LockStripes.shared(forFolder: layout.root, lockFilePath: layout.formatMarkerPath),
            formatUpgrade: writable ? try FormatUpgrade.needed(layout, synchronized: synchronized) : nil,
            journal: writable ? Journal(root: layout.root) : nil)
        // What a power cut took from a synchronized flush's appends is put back before anything reads.
        if let journal = storage.journal, try FileSystem.stamp(at: journal.path).map({ $0.size > 0 }) == true {
            let replay = try storage.locks.withAllLocks { () throws(FlatCacheError) in try journal.replay() }
            if replay.appendsRestored + replay.sidecarsRestored > 0 {
                configuration.logger.notice(
                    "FlatCache finished appends a crash or power cut left unfinished, from its journal",
                    metadata: ["directory": "\(directory.path)", "appends": "\(replay.appendsRestored)",
                               "sidecars": "\(replay.sidecarsRestored)"])
            }
        }
        self.directory = directory
        self.configuration = configuration
        self.layout = layout
        let policy = CachePolicy(configuration: configuration, storage: storage, usageFile: layout.usageFile)
        let engine = CacheEngine(
            storage: storage, memoryLimit: configuration.memoryLimit, writeDelay: configuration.writeDelay,
            policy: policy, sweeper: { engine in Sweep(engine: engine, layout: layout).runInBackground() })
        self.engine = engine
        messages = MessageStore(engine: engine, layout: layout, maxPerChannel: configuration.maxMessagesPerChannel)
        channels = ChannelStore(engine: engine, layout: layout)
        users = UserStore(engine: engine, layout: layout)
        search = MessageSearch(service: SearchService(store: messages))
        outbox = Outbox(storage: storage, file: layout.outboxFile, clock: configuration.clock)
        try Self.checkRecordTypes(layout, storage: storage, engine: engine, configuration: configuration, directory: directory)
        policy.open()
        if let bundle = configuration.preloadedBundle, writable {
            preload = try Preload(bundle: bundle, layout: layout, storage: storage).run(Message.self, Channel.self, User.self)
        } else {
            preload = nil
        }
        // The size limit and expiry are checked at open, away from the caller.
        if policy.sweeps && !isReadOnly {
            engine.writeQueue.async { Sweep(engine: engine, layout: layout).runInBackground() }
        }
    }

    /// Gives the folder the configured Data Protection class and backup
    /// exclusion (no-ops where the platform has neither; see Platform/).
    private static func applyFolderAttributes(_ configuration: Configuration, to root: String) throws(FlatCacheError) {
        if let protection = configuration.fileProtection { try FileProtection.apply(protection, toFolder: root) }
        try BackupExclusion.apply(configuration.isExcludedFromBackup, toFolder: root)
    }

    /// The record types this cache reads and writes.
    public static var recordTypes: RecordTypes { RecordTypes(Message.self, Channel.self, User.self) }

    /// Makes sure the folder holds ``recordTypes``: records them in a folder
    /// that names none yet, and refuses (or, when configured, erases) a folder
    /// written with others, before any of its records is read.
    private static func checkRecordTypes(
        _ layout: CacheLayout, storage: RecordStorage, engine: CacheEngine, configuration: Configuration, directory: URL
    ) throws(FlatCacheError) {
        let requested = Self.recordTypes
        if storage.isReadOnly {
            if let cached = try RecordTypesFile.read(layout), cached != requested {
                throw .recordTypeMismatch(directory: directory, cached: cached, requested: requested)
            }
            return
        }
        // A folder that already names these types and this key, with no key change under way, needs no
        // write: it is opened without taking every lock, which another process's sweep may hold for a while.
        if try !KeyChange.isUnderWay(layout), let cached = try RecordTypesFile.readContents(layout),
            cached.types == requested, cached.keyID == layout.sealer?.keyID
        {
            return
        }
        // Under every lock: two processes opening a new folder with different types cannot both win.
        try storage.locks.withAllLocks { () throws(FlatCacheError) in
            // A key change a crash cut short is finished first (toward this cache's key).
            if try KeyChange.isUnderWay(layout) {
                try KeyChange.finish(
                    layout, directory: directory, storage: storage, recordTypes: requested, Message.self, Channel.self,
                    User.self)
            }
            try checkEncryption(layout, directory: directory)
            switch try RecordTypesFile.readContents(layout) {
            case let cached? where cached.types == requested && cached.keyID == layout.sealer?.keyID:
                return
            case let cached? where cached.types == requested:
                break  // an empty plain folder taking its key (checkEncryption allowed it)
            case let cached? where !configuration.eraseOnRecordTypeChange:
                throw .recordTypeMismatch(directory: directory, cached: cached.types, requested: requested)
            case let cached?:
                configuration.logger.notice(
                    "FlatCache erased a cache written with other record types (eraseOnRecordTypeChange)",
                    metadata: ["directory": "\(layout.root)", "cached": "\(cached.types)", "requested": "\(requested)"])
                try removeData(layout, engine: engine)
            case nil:
                break
            }
            try RecordTypesFile.write(requested, layout, synchronized: storage.synchronized)
        }
    }

    /// Removes every cached channel, message and user, the outbox (messages
    /// not sent yet), and the quarantine folder: what an app does when its user logs out. The folder stays a cache.
    ///
    /// Waits for calls in progress to finish and holds off new ones until done.
    /// - important: Requires disk I/O.
    /// - Throws: ``FlatCacheError/readOnlyCache(_:)`` or a file-system error.
    func removeAll() throws(FlatCacheError) {
        try storage.requireWritable()
        try storage.locks.withAllLocks { () throws(FlatCacheError) in
            try removeData()
            engine.forgetAll()
        }
    }

    /// Removes the data files and the quarantine; call with every lock held.
    func removeData() throws(FlatCacheError) {
        try Self.removeData(layout, engine: engine)
    }

    private static func removeData(_ layout: CacheLayout, engine: CacheEngine) throws(FlatCacheError) {
        try layout.channelsFile.remove()
        try layout.usersFile.remove()
        try layout.usageFile.remove()
        try layout.outboxFile.remove()
        // The index holds the words of every message: it goes with them.
        try layout.searchFile.remove()
        try FileSystem.removeFile(at: layout.preloadedPath)
        engine.policy.usage.forget(engine.policy.usage.all.keys)
        try FileSystem.removeItem(at: layout.messagesDirectory)
        try FileSystem.removeItem(at: layout.quarantine.directory)
        // What it names is gone: left, a replay could write old lines into a new file.
        try FileSystem.removeItem(at: layout.journalPath)
    }
}

extension ChatCache where Message == ChatMessage, Channel == ChatChannel, User == ChatUser {
    /// Opens the cache in `directory` for the built-in ``ChatMessage``,
    /// ``ChatChannel`` and ``ChatUser`` models.
    ///
    /// ```swift
    /// let cache = try ChatCache(directory: folder)
    /// ```
    /// - important: Blocks the calling thread on disk I/O (it may copy a preloaded bundle) and other
    ///   processes' locks: from the main actor or a task, call `ChatCache.open(directory:configuration:)`.
    /// - Parameters:
    ///   - directory: A folder that is empty, missing, or a FlatCache folder
    ///     (with ``Configuration/readOnly``: a FlatCache folder).
    ///   - configuration: Retention, durability, logging, read-only and record-type choices.
    /// - Throws: ``FlatCacheError/invalidConfiguration(reason:)``,
    ///   ``FlatCacheError/notADirectory(_:)``, ``FlatCacheError/notACacheDirectory(_:)``,
    ///   ``FlatCacheError/unsupportedFormat(marker:directory:)``,
    ///   ``FlatCacheError/recordTypeMismatch(directory:cached:requested:)`` (a folder
    ///   written with an app's own record types), or a file-system error (a folder
    ///   that cannot be created or read).
    public convenience init(directory: URL, configuration: Configuration = Configuration()) throws(FlatCacheError) {
        try self.init(opening: directory, configuration: configuration)
    }
}
