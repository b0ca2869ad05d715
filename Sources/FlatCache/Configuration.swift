public import Foundation
public import Logging

/// How a cache keeps its files: retention, durability and where problems are logged.
///
/// ```swift
/// var configuration = Configuration()
/// configuration.maxMessagesPerChannel = 100
/// configuration.durability = .synchronized
/// let cache = try ChatCache(directory: folder, configuration: configuration)
/// ```
public struct Configuration: Sendable {
    /// The default number of messages kept per channel: 200.
    public static let defaultMaxMessagesPerChannel = 200

    /// The default memory tier budget: 16 MiB.
    public static let defaultMemoryLimit = 16 << 20

    /// The default write-behind delay: 100 milliseconds.
    public static let defaultWriteDelay = Duration.milliseconds(100)

    /// The default disk size limit: 256 MiB.
    ///
    /// The default of Sendbird's chat SDK cache, which this one stands in
    /// for: room for about twice the benchmark's large workload (1,000
    /// channels of 200 messages, 122 MB), and a small share of a phone's storage.
    public static let defaultSizeLimit = 256 << 20

    /// The default share of ``sizeLimit`` a sweep frees the folder down to: 0.7.
    public static let defaultSweepTarget = 0.7

    /// How many of a channel's most recent messages are kept; older ones are dropped on save.
    ///
    /// Must be at least 1. The default is ``defaultMaxMessagesPerChannel``.
    public var maxMessagesPerChannel: Int

    /// Whether a write waits for the disk (see ``Durability``). The default is ``Durability/atomic``.
    public var durability: Durability

    /// The memory tier's budget, in estimated bytes of decoded records.
    ///
    /// Channels' messages, the channel list and the users that were loaded
    /// or saved stay in memory, least recently used leaving first once the
    /// estimate passes this budget; a load served from memory reads no file
    /// (one `stat` checks that no one wrote it since). Records whose changes
    /// are not written yet stay until they are. The estimate is each record's
    /// serialized size plus 64 bytes. `0` keeps nothing in memory beyond
    /// changes waiting to be written. The default is ``defaultMemoryLimit``.
    public var memoryLimit: Int

    /// How long the `async` saves wait before writing, so that changes to one
    /// file in that time are written together, once.
    ///
    /// An `async` save returns when the memory tier holds the change; its file
    /// is written at most this long after, and ``ChatCache/flush()`` writes
    /// everything waiting at once. `.zero` makes every `async` save write
    /// before it returns. The synchronous calls always write before they return.
    /// The default is ``defaultWriteDelay``.
    public var writeDelay: Duration

    /// How old a channel's messages may get, counted from their last save,
    /// before they read as a miss; `nil` (the default) keeps them however old.
    ///
    /// An expired channel loads as not cached (`loadIfCached` returns `nil`),
    /// a save into it starts it afresh (the expired messages are not kept),
    /// and the next ``ChatCache/sweep()`` removes its file. Saving a channel,
    /// even with unchanged content, makes it fresh again. The channel list and
    /// the users do not expire. Time comes from ``clock``.
    ///
    /// A channel whose message file another instance or process wrote after
    /// the last save this cache knows counts as saved when that is noticed
    /// (by the file's stamp, kept with the save times in `usage.lines`):
    /// another writer's save is never taken for expired, nor dropped by a
    /// save "into an expired channel".
    public var maxAge: Duration?

    /// The most bytes the cache folder may hold (every file in it, sidecars
    /// and `quarantine/` included); `nil` for no limit. The default is
    /// ``defaultSizeLimit``.
    ///
    /// Checked when the cache opens and when the bytes written since the last
    /// check could have crossed it, never by a scan per call. A sweep then
    /// removes, until the folder is at ``sweepTarget`` of the limit or less:
    /// files in `quarantine/` first, then whole channels' messages, least
    /// recently used first (loaded or saved by the app), then the users, and
    /// the channel list last. A channel with changes not yet written, or
    /// written by another process since the sweep began, is kept. The
    /// ``ChatCache/outbox`` counts toward the limit but is never removed: it
    /// holds messages not sent yet.
    public var sizeLimit: Int?

    /// The share of ``sizeLimit`` a sweep frees the folder down to, so that
    /// sweeps come now and then rather than on every save: more than 0, at
    /// most 1. The default is ``defaultSweepTarget``.
    public var sweepTarget: Double

    /// The time ``maxAge`` and the least-recently-used order go by; the
    /// system clock by default.
    public var clock: CacheClock

    /// A read-only cache folder shipped with the app (say, in its bundle),
    /// built by `flatcache import`, that seeds what the cache lacks when it
    /// opens; `nil` (the default) for none.
    ///
    /// Each of the bundle's channels, its channel list and its users that
    /// the cache has no file for is copied in, after it passes the checks of
    /// a load (sidecar, Base64, every record decodes): so the very first,
    /// offline launch shows the shipped data. A damaged bundle file is
    /// skipped, logged and passed to ``onDamagedFile``, never copied; a file
    /// the cache already has is never replaced by the bundle's copy; the
    /// bundle is never written. The folder then remembers this bundle (by its
    /// folders' stamps), so later launches check nothing and copy nothing:
    /// data the cache dropped since (evicted, expired) does not come back
    /// until a new bundle (an app update) or after
    /// `removeAll()`. ``ChatCache/preload`` tells what was
    /// done. A read-only cache seeds nothing. Opening throws when the bundle
    /// is not a FlatCache folder of this format, or holds other record types.
    public var preloadedBundle: URL?

    /// Where FlatCache reports files it found corrupt and moved aside.
    ///
    /// The default logs with the label `FlatCache` through whatever backend
    /// the app bootstrapped for swift-log.
    public var logger: Logger

    /// Whether the cache only reads: nothing in the folder is ever created,
    /// written, moved or removed.
    ///
    /// Loads work with read permission alone, so a cache inside an app bundle,
    /// on a read-only mount or owned by another user can be read. A damaged
    /// file reads as a miss and is reported (``logger``, ``onDamagedFile``),
    /// but stays where it is. Every write throws
    /// ``FlatCacheError/readOnlyCache(_:)``. A folder FlatCache cannot write
    /// (no write permission, a read-only mount) opens read-only even when
    /// this is `false`; ``ChatCache/isReadOnly`` tells. The default is `false`.
    public var readOnly: Bool

    /// Whether the folder's files are encrypted at rest, and with which key
    /// (see ``Encryption``); `nil`, the default, keeps them plain.
    ///
    /// The folder remembers its key's id: opening an encrypted folder without
    /// a key throws ``FlatCacheError/encryptionKeyRequired(directory:keyID:)``,
    /// with another key ``FlatCacheError/wrongEncryptionKey(directory:keyID:given:)``,
    /// and a plain folder holding data with a key
    /// ``FlatCacheError/folderNotEncrypted(_:)``, each before anything in the
    /// folder is touched. An empty folder takes the configured choice.
    /// ``ChatCache/migrate(encryption:)`` converts a folder either way, and
    /// ``ChatCache/rotateKey(to:)`` moves it to another key.
    public var encryption: Encryption?

    /// Where sealed records' nonces come from: random, except in tests that pin golden files.
    var nonceSource: Sealer.NonceSource = .random

    /// Whether opening a folder written with other record types erases its
    /// cached data and starts over, instead of throwing
    /// ``FlatCacheError/recordTypeMismatch(directory:cached:requested:)``.
    ///
    /// An explicit choice, like GRDB's `eraseDatabaseOnSchemaChange`: the
    /// erase is logged, and the `format` marker stays. To keep the data,
    /// convert it instead with ``ChatCache/migrate(message:channel:user:)``.
    /// The default is `false`.
    public var eraseOnRecordTypeChange: Bool

    /// Called for every damaged data file a load or ``ChatCache/verify(repair:progress:)``
    /// finds, after it was moved aside (or, read-only, left in place); `nil` by default.
    ///
    /// Called on the thread that found it, with the file's lock held: keep it
    /// short and do not call the cache from it.
    ///
    /// ```swift
    /// var configuration = Configuration()
    /// configuration.onDamagedFile = { file in print("cache miss:", file.path, file.problem) }
    /// ```
    public var onDamagedFile: (@Sendable (DamagedFile) -> Void)?

    /// The Data Protection class of the cache folder and every file the
    /// cache makes in it, on iOS, iPadOS, tvOS, watchOS and visionOS; `nil`
    /// leaves the folder's class as it is (the app's default class, or what
    /// the app set). The default is
    /// ``FileProtection/completeUntilFirstUserAuthentication``, which lets
    /// background work read and write the cache once the device was unlocked.
    ///
    /// Set on the folder when the cache opens; new files and folders take it
    /// from the folder (a write's temporary file too, and the rename over its
    /// target keeps it). When the folder had another class, the files already
    /// in it get the new one at that open. A read-only cache sets nothing.
    /// Where setting it fails, opening throws
    /// ``FlatCacheError/fileSystem(_:path:code:)`` with ``FlatCacheError/FileOperation/setAttributes``.
    ///
    /// On macOS (Mac Catalyst included), Linux and Android it is accepted and
    /// does nothing: those systems have no per-file protection classes.
    public var fileProtection: FileProtection?

    /// Whether the cache folder is kept out of backups: iCloud and computer
    /// backups on iOS, iPadOS, tvOS, watchOS and visionOS, Time Machine on
    /// macOS. The default is `true`, as a cache can be fetched again.
    ///
    /// Set on the folder (its `URLResourceValues.isExcludedFromBackup`) when
    /// the cache opens, to this value, which covers every file in it; a
    /// read-only cache sets nothing. Where setting it fails, opening throws
    /// ``FlatCacheError/fileSystem(_:path:code:)`` with ``FlatCacheError/FileOperation/setAttributes``.
    /// On Linux and Android it is accepted and does nothing: they have no
    /// such mark.
    public var isExcludedFromBackup: Bool

    /// A configuration with the given values; every argument has a sensible default.
    ///
    /// - Parameters:
    ///   - maxMessagesPerChannel: See ``maxMessagesPerChannel``.
    ///   - durability: See ``durability``.
    ///   - memoryLimit: See ``memoryLimit``.
    ///   - writeDelay: See ``writeDelay``.
    ///   - logger: See ``logger``.
    ///   - readOnly: See ``readOnly``.
    ///   - eraseOnRecordTypeChange: See ``eraseOnRecordTypeChange``.
    ///   - onDamagedFile: See ``onDamagedFile``.
    ///   - maxAge: See ``maxAge``.
    ///   - sizeLimit: See ``sizeLimit``.
    ///   - sweepTarget: See ``sweepTarget``.
    ///   - clock: See ``clock``.
    ///   - preloadedBundle: See ``preloadedBundle``.
    ///   - fileProtection: See ``fileProtection``.
    ///   - isExcludedFromBackup: See ``isExcludedFromBackup``.
    ///   - encryption: See ``encryption``.
    public init(
        maxMessagesPerChannel: Int = Configuration.defaultMaxMessagesPerChannel,
        durability: Durability = .atomic,
        memoryLimit: Int = Configuration.defaultMemoryLimit,
        writeDelay: Duration = Configuration.defaultWriteDelay,
        logger: Logger = Logger(label: "FlatCache"),
        readOnly: Bool = false,
        eraseOnRecordTypeChange: Bool = false,
        onDamagedFile: (@Sendable (DamagedFile) -> Void)? = nil,
        maxAge: Duration? = nil,
        sizeLimit: Int? = Configuration.defaultSizeLimit,
        sweepTarget: Double = Configuration.defaultSweepTarget,
        clock: CacheClock = .system,
        preloadedBundle: URL? = nil,
        fileProtection: FileProtection? = .completeUntilFirstUserAuthentication,
        isExcludedFromBackup: Bool = true,
        encryption: Encryption? = nil
    ) {
        self.maxMessagesPerChannel = maxMessagesPerChannel
        self.durability = durability
        self.memoryLimit = memoryLimit
        self.writeDelay = writeDelay
        self.logger = logger
        self.readOnly = readOnly
        self.eraseOnRecordTypeChange = eraseOnRecordTypeChange
        self.onDamagedFile = onDamagedFile
        self.maxAge = maxAge
        self.sizeLimit = sizeLimit
        self.sweepTarget = sweepTarget
        self.clock = clock
        self.preloadedBundle = preloadedBundle
        self.fileProtection = fileProtection
        self.isExcludedFromBackup = isExcludedFromBackup
        self.encryption = encryption
    }

    /// Throws ``FlatCacheError/invalidConfiguration(reason:)`` for a value out of range.
    func validate() throws(FlatCacheError) {
        guard maxMessagesPerChannel >= 1 else {
            throw .invalidConfiguration(
                reason: "maxMessagesPerChannel must be at least 1, not \(maxMessagesPerChannel)")
        }
        guard memoryLimit >= 0 else {
            throw .invalidConfiguration(reason: "memoryLimit must be 0 or more, not \(memoryLimit)")
        }
        guard writeDelay >= .zero else {
            throw .invalidConfiguration(reason: "writeDelay must be zero or more, not \(writeDelay)")
        }
        if let maxAge, maxAge <= .zero {
            throw .invalidConfiguration(reason: "maxAge must be more than zero, not \(maxAge)")
        }
        if let sizeLimit, sizeLimit <= 0 {
            throw .invalidConfiguration(reason: "sizeLimit must be more than 0 bytes, not \(sizeLimit)")
        }
        guard sweepTarget > 0, sweepTarget <= 1 else {
            throw .invalidConfiguration(reason: "sweepTarget must be more than 0 and at most 1, not \(sweepTarget)")
        }
    }
}

/// How hard a write tries to reach the disk before it returns.
///
/// Both levels replace files atomically (temporary file, then rename), so an
/// app crash at any instant leaves each file old or new, never torn, and a
/// load never returns a torn file: the SHA256 sidecar catches it.
public enum Durability: Sendable, Hashable {
    /// Rename only. Survives an app crash; after a power loss a recent write
    /// may be lost and read as a cache miss. The fast choice for a cache.
    case atomic
    /// A returned write survives a power loss too: a rewritten file is
    /// `fsync`ed before its rename and the folder after it; the lines a flush
    /// appends (new messages, edits, deletions) are made durable together by
    /// one entry in the folder's journal and one `fsync` of it, which the
    /// next writable open replays after a power loss (docs/format.md, "The
    /// journal"). On Apple platforms a sync is `fcntl(F_FULLFSYNC)`, which
    /// also flushes the drive's own cache (plain `fsync` there does not),
    /// falling back to `fsync` on a file system that refuses it; on Linux and
    /// Android, `fdatasync` for files. A sync costs about half a millisecond
    /// on a typical Linux disk, more with `F_FULLFSYNC`.
    case synchronized
}
