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

    /// How many of a channel's most recent messages are kept; older ones are dropped on save.
    ///
    /// Must be at least 1. The default is ``defaultMaxMessagesPerChannel``.
    public var maxMessagesPerChannel: Int

    /// Whether a write waits for the disk (see ``Durability``). The default is ``Durability/atomic``.
    public var durability: Durability

    /// Where FlatCache reports files it found corrupt and moved aside.
    ///
    /// The default logs with the label `FlatCache` through whatever backend
    /// the app bootstrapped for swift-log.
    public var logger: Logger

    /// A configuration with the given values; every argument has a sensible default.
    public init(
        maxMessagesPerChannel: Int = Configuration.defaultMaxMessagesPerChannel,
        durability: Durability = .atomic,
        logger: Logger = Logger(label: "FlatCache")
    ) {
        self.maxMessagesPerChannel = maxMessagesPerChannel
        self.durability = durability
        self.logger = logger
    }

    /// Throws ``FlatCacheError/invalidConfiguration(reason:)`` for a value out of range.
    func validate() throws(FlatCacheError) {
        guard maxMessagesPerChannel >= 1 else {
            throw .invalidConfiguration(
                reason: "maxMessagesPerChannel must be at least 1, not \(maxMessagesPerChannel)")
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
    /// `fsync` each file before its rename and the folder after it, so a
    /// returned write survives a power loss too. Costs about half a
    /// millisecond per file on a typical disk.
    case synchronized
}
