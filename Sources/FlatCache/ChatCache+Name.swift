import Foundation

/// Opening a cache by name in the user's caches folder, as Nuke's and Kingfisher's caches do.
extension ChatCache {
    /// Opens the cache called `name` in the user's caches folder,
    /// `<Caches>/FlatCache/<name>`, creating it when missing.
    ///
    /// `<Caches>` is the app's `Caches` folder on Apple platforms (the
    /// system may empty it when storage runs low, never while the app runs;
    /// it is not backed up), and `$XDG_CACHE_HOME` (when absolute) or
    /// `~/.cache` on Linux. An Android app passes its `Context`'s cache folder
    /// to `init(directory:configuration:)` instead.
    ///
    /// ```swift
    /// let cache = try ChatCache<SDKMessage, SDKChannel, SDKUser>(name: "chat")
    /// ```
    /// - important: Blocks the calling thread on disk I/O (it may copy a preloaded bundle) and other
    ///   processes' locks: from the main actor or a task, call `ChatCache.open(name:configuration:)`.
    /// - Parameters:
    ///   - name: One folder name: not empty, `.` or `..`, and without `/` or NUL.
    ///   - configuration: Retention, durability, logging, read-only, record-type and platform choices.
    /// - Throws: ``FlatCacheError/invalidCacheName(_:)``, or as `init(directory:configuration:)`.
    public convenience init(name: String, configuration: Configuration = Configuration()) throws(FlatCacheError) {
        try self.init(opening: CachesDirectory.folder(named: name, in: CachesDirectory.user()), configuration: configuration)
    }

    /// Opens the cache called `name` in the user's caches folder without
    /// blocking the caller (see `init(name:configuration:)` for the folder,
    /// and `open(directory:configuration:)`).
    ///
    /// ```swift
    /// let cache = try await ChatCache<SDKMessage, SDKChannel, SDKUser>.open(name: "chat")
    /// ```
    /// - Parameters:
    ///   - name: One folder name: not empty, `.` or `..`, and without `/` or NUL.
    ///   - configuration: Retention, durability, logging, read-only, record-type and platform choices.
    /// - Returns: The open cache.
    /// - Throws: ``FlatCacheError/invalidCacheName(_:)``, or as `init(directory:configuration:)`.
    public static func open(name: String, configuration: Configuration = Configuration()) async throws(FlatCacheError) -> ChatCache {
        let directory = try CachesDirectory.folder(named: name, in: CachesDirectory.user())
        return try await open(directory: directory, configuration: configuration)
    }
}

extension ChatCache where Message == ChatMessage, Channel == ChatChannel, User == ChatUser {
    /// Opens the cache called `name` in the user's caches folder,
    /// `<Caches>/FlatCache/<name>`, for the built-in ``ChatMessage``,
    /// ``ChatChannel`` and ``ChatUser`` models.
    ///
    /// `<Caches>` is the app's `Caches` folder on Apple platforms (the
    /// system may empty it when storage runs low, never while the app runs;
    /// it is not backed up), and `$XDG_CACHE_HOME` (when absolute) or
    /// `~/.cache` on Linux. An Android app passes its `Context`'s cache folder
    /// to `init(directory:configuration:)` instead.
    ///
    /// ```swift
    /// let cache = try ChatCache(name: "chat")
    /// ```
    /// - important: Blocks the calling thread on disk I/O (it may copy a preloaded bundle) and other
    ///   processes' locks: from the main actor or a task, call `ChatCache.open(name:configuration:)`.
    /// - Parameters:
    ///   - name: One folder name: not empty, `.` or `..`, and without `/` or NUL.
    ///   - configuration: Retention, durability, logging, read-only, record-type and platform choices.
    /// - Throws: ``FlatCacheError/invalidCacheName(_:)``, or as `init(directory:configuration:)`.
    public convenience init(name: String, configuration: Configuration = Configuration()) throws(FlatCacheError) {
        try self.init(opening: CachesDirectory.folder(named: name, in: CachesDirectory.user()), configuration: configuration)
    }

    /// Opens the cache called `name` in the user's caches folder for the
    /// built-in models without blocking the caller (see
    /// `init(name:configuration:)` for the folder).
    ///
    /// ```swift
    /// let cache = try await ChatCache.open(name: "chat")
    /// ```
    /// - Parameters:
    ///   - name: One folder name: not empty, `.` or `..`, and without `/` or NUL.
    ///   - configuration: Retention, durability, logging, read-only, record-type and platform choices.
    /// - Returns: The open cache.
    /// - Throws: ``FlatCacheError/invalidCacheName(_:)``, or as `init(directory:configuration:)`.
    public static func open(name: String, configuration: Configuration = Configuration()) async throws(FlatCacheError) -> ChatCache {
        let directory = try CachesDirectory.folder(named: name, in: CachesDirectory.user())
        return try await open(directory: directory, configuration: configuration)
    }
}
