import Foundation

/// Where `ChatCache(name:)` keeps its folders: `<caches>/FlatCache/<name>`.
enum CachesDirectory {
    /// The user's caches folder: on Apple platforms the app's `Caches`
    /// folder (`FileManager`'s `.cachesDirectory` in the user domain: inside
    /// the app's container on iOS, tvOS, watchOS, visionOS and a sandboxed
    /// Mac app, `~/Library/Caches` for an unsandboxed Mac app); elsewhere
    /// `$XDG_CACHE_HOME` when it is an absolute path (the XDG Base Directory
    /// rule), else `~/.cache`.
    static func user(environment: [String: String] = ProcessInfo.processInfo.environment) throws(FlatCacheError) -> URL {
        #if canImport(Darwin)
        guard let caches = FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first else {
            throw .fileSystem(.open, path: "Library/Caches", code: .ENOENT)
        }
        return caches
        #else
        if let xdg = environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") {
            return URL(fileURLWithPath: xdg, isDirectory: true)
        }
        let home = environment["HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil }
            ?? FileManager.default.homeDirectoryForCurrentUser.path
        return URL(fileURLWithPath: home, isDirectory: true).appendingPathComponent(".cache", isDirectory: true)
        #endif
    }

    /// The folder of the cache named `name` under `caches`: `<caches>/FlatCache/<name>`.
    ///
    /// - Throws: ``FlatCacheError/invalidCacheName(_:)`` for a name that is
    ///   not one folder's name: empty, `.`, `..`, or holding `/` or NUL.
    static func folder(named name: String, in caches: URL) throws(FlatCacheError) -> URL {
        guard !name.isEmpty, name != ".", name != "..", !name.contains("/"), !name.contains("\0") else {
            throw .invalidCacheName(name)
        }
        return caches.appendingPathComponent("FlatCache", isDirectory: true).appendingPathComponent(name, isDirectory: true)
    }
}
