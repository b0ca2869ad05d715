public import Foundation

/// Where `async` opens run: threads of their own, never the cooperative pool
/// (an open may copy a preloaded bundle and wait for other processes' locks).
private let openQueue = DispatchQueue(label: "FlatCache.open", qos: .userInitiated, attributes: .concurrent)

extension ChatCache {
    /// Opens the cache in `directory` without blocking the caller: the folder
    /// is prepared (and a ``Configuration/preloadedBundle`` copied) on
    /// FlatCache's own threads. What an app calls.
    ///
    /// ```swift
    /// let cache = try await ChatCache<SDKMessage, SDKChannel, SDKUser>.open(directory: folder)
    /// ```
    ///
    /// It opens exactly as `init(directory:configuration:)` does.
    /// - Parameters:
    ///   - directory: A folder that is empty, missing, or a FlatCache folder
    ///     (with ``Configuration/readOnly``: a FlatCache folder).
    ///   - configuration: Retention, durability, logging, read-only and record-type choices.
    /// - Returns: The open cache.
    /// - Throws: As `init(directory:configuration:)`.
    public static func open(
        directory: URL, configuration: Configuration = Configuration()
    ) async throws(FlatCacheError) -> ChatCache {
        try await BlockingWork.run(on: openQueue) { () throws(FlatCacheError) in
            try ChatCache(opening: directory, configuration: configuration)
        }
    }
}

extension ChatCache where Message == ChatMessage, Channel == ChatChannel, User == ChatUser {
    /// Opens the cache in `directory` for the built-in ``ChatMessage``,
    /// ``ChatChannel`` and ``ChatUser`` models without blocking the caller:
    /// the folder is prepared (and a ``Configuration/preloadedBundle``
    /// copied) on FlatCache's own threads. What an app calls.
    ///
    /// ```swift
    /// let cache = try await ChatCache.open(directory: folder)
    /// ```
    /// - Parameters:
    ///   - directory: A folder that is empty, missing, or a FlatCache folder
    ///     (with ``Configuration/readOnly``: a FlatCache folder).
    ///   - configuration: Retention, durability, logging, read-only and record-type choices.
    /// - Returns: The open cache.
    /// - Throws: As `init(directory:configuration:)`.
    public static func open(
        directory: URL, configuration: Configuration = Configuration()
    ) async throws(FlatCacheError) -> ChatCache {
        try await BlockingWork.run(on: openQueue) { () throws(FlatCacheError) in
            try ChatCache(opening: directory, configuration: configuration)
        }
    }
}
