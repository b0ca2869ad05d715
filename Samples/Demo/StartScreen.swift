import ArgumentParser
import FlatCache
import FlatCacheSampleServer
import Foundation

/// The demo's default command: a chat app's start-up, first offline from the
/// cache, then online, replacing the cache with what the (simulated) server
/// sends. `flatcache-demo` and `flatcache-demo start` run it.
struct StartScreen: AsyncParsableCommand {
    /// Its name, and the help that says what it does.
    static let configuration = CommandConfiguration(
        commandName: "start",
        abstract: "Open a chat app offline from FlatCache, then refresh it from a simulated server.",
        discussion: """
            The first run finds the cache empty, goes online and caches the server's data. \
            Run it again: the same screen appears at once from the cache, and saving the \
            unchanged data skips every write. With --preloaded, an empty cache is first \
            seeded from a bundle folder that `flatcache import` built. Then it searches the \
            cached messages for "trail" and shows the best hit. It ends by printing the \
            cache's statistics.
            """)

    /// Where the cache lives; `nil` for the default folder.
    @Option(name: .long, help: "The cache folder. (default: <user caches>/flatcache-demo)")
    var directory: String?

    /// Whether to empty the cache first.
    @Flag(name: .long, help: "Empty the cache first, as when a user logs out.")
    var reset = false

    /// Whether to skip the server.
    @Flag(name: .long, help: "Stay offline: only show what is cached.")
    var offline = false

    /// A bundle folder that seeds an empty cache.
    @Option(name: .long, help: "A read-only cache folder built by `flatcache import` that seeds what the cache lacks.")
    var preloaded: String?

    /// The cache's size limit, in bytes.
    @Option(name: .long, help: "The most bytes the cache folder may hold. (default: 268435456, 256 MiB)")
    var sizeLimit: Int?

    /// How long channels' messages live, in seconds.
    @Option(name: .long, help: "How many seconds after their last save channels' messages expire. (default: never)")
    var maxAge: Int?

    /// Refuses limits of 0 or less.
    func validate() throws {
        if let sizeLimit, sizeLimit <= 0 { throw ValidationError("Please give --size-limit a number of bytes above 0.") }
        if let maxAge, maxAge <= 0 { throw ValidationError("Please give --max-age a number of seconds above 0.") }
    }

    /// Opens the cache, shows it, refreshes it (unless offline), then prints its statistics.
    func run() async throws {
        let folder = directory.map { URL(fileURLWithPath: $0) } ?? Demo.cachesFolder(named: "flatcache-demo")
        var configuration = Configuration()
        configuration.preloadedBundle = preloaded.map { URL(fileURLWithPath: $0) }
        if let sizeLimit { configuration.sizeLimit = sizeLimit }
        configuration.maxAge = maxAge.map { .seconds($0) }
        print("FlatCache demo · cache folder: \(folder.path)")
        if reset {
            // Before the bundle seeds anything: a reset cache starts from the bundle again.
            try Self.removeAll(in: folder)
            print("Reset · removed every cached channel, message and user.")
        }
        let cache = try ChatCache(directory: folder, configuration: configuration)
        if let preload = cache.preload { print("Preloaded · \(preload)") }
        try showAndRefresh(cache)
        try await showSearch(cache)
        // Everything saved is on disk; then the policies, now rather than in the background.
        try await cache.close()
        if sizeLimit != nil || maxAge != nil { print("\nSweep · \(try await cache.sweep())") }
        Self.show(try await cache.statistics())
    }

    /// The app's start: the cached screen, then (online) the server's data saved over it.
    private func showAndRefresh(_ cache: ChatCache<ChatMessage, ChatChannel, ChatUser>) throws {

        let started = Date()
        let channels = try cache.channels.blocking.load()
        let cachedMessages = try channels.reduce(0) { $0 + (try cache.messages.blocking.load(in: $1.channelURL).count) }
        let elapsed = Date().timeIntervalSince(started) * 1000
        if channels.isEmpty {
            print("\nOffline · the cache is empty: nothing to show until the server answers.")
        } else {
            print("\nOffline · read from the cache in \(String(format: "%.1f", elapsed)) ms: "
                + "\(channels.count) channels, \(cachedMessages) messages, \(try cache.users.blocking.load().count) users.")
            try showScreen(cache, channels)
        }
        guard !offline else { return }

        let server = try SampleServer()
        print("\nOnline · the simulated server sent \(server.channels.count) channels, "
            + "\(server.messages.count) messages, \(server.users.count) users.")
        let channelResult = try cache.channels.blocking.replace(with: server.channels)
        var messageResult = SaveResult()
        for channel in try cache.channels.blocking.load() {
            messageResult += try cache.messages.blocking.replace(server.messages(in: channel.channelURL), in: channel.channelURL)
        }
        let userResult = try cache.users.blocking.save(server.users)
        print("  channels  \(Self.summary(channelResult, leftOut: "open channel"))")
        print("  messages  \(Self.summary(messageResult, leftOut: "unsent message"))")
        print("  users     \(Self.summary(userResult, leftOut: "user"))")

        if channels.isEmpty {
            try showScreen(cache, try cache.channels.blocking.load())
            print("\nRun it again to open the same screen offline, from the cache.")
        }
    }

    /// Empties the cache in `folder` (what a user logging out does).
    private static func removeAll(in folder: URL) throws {
        try ChatCache(directory: folder).blocking.removeAll()
    }

    /// The statistics, as an app's debug screen would show them.
    private static func show(_ statistics: CacheStatistics) {
        print("\nStatistics")
        print("  disk      \(statistics.diskFiles) files, \(statistics.diskBytes) bytes (\(statistics.quarantinedBytes) quarantined)")
        print("  cached    \(statistics.channels) channels, \(statistics.channelsWithMessages) with messages, "
            + "\(statistics.messages) messages, \(statistics.users) users")
        print("  memory    \(statistics.memoryEntries) files, \(statistics.memoryBytes) bytes")
        print("  loads     \(statistics.memoryHits) from memory, \(statistics.diskHits) from disk, "
            + "\(statistics.diskMisses) missed both")
        print("  policies  \(statistics.expirations) expired, \(statistics.evictions) evicted")
    }

    /// The channel list, and the last messages of the newest channel.
    private func showScreen(_ cache: ChatCache<ChatMessage, ChatChannel, ChatUser>, _ channels: [ChatChannel]) throws {
        print("\n  Channels")
        for channel in channels {
            let last = channel.lastMessage.map { "\($0.sender?.nickname ?? "admin"): \($0.text)" } ?? ""
            print("  · \(channel.name)  \(Self.time(channel.lastMessageAt))  \(last)")
        }
        guard let newest = channels.first else { return }
        print("\n  \(newest.name): latest messages")
        for message in try cache.messages.blocking.load(in: newest.channelURL).suffix(3) {
            print("    \(Self.time(message.createdAt))  \(message.sender?.nickname ?? "admin"): \(message.text)")
        }
    }

    /// A save's outcome in a few words, such as `files: 5 unchanged, write skipped`.
    private static func summary(_ result: SaveResult, leftOut noun: String) -> String {
        var parts = [String]()
        if result.filesWritten > 0 { parts.append("\(result.filesWritten) written") }
        if result.filesUnchanged > 0 { parts.append("\(result.filesUnchanged) unchanged, write skipped") }
        if result.recordsLeftOut > 0 {
            parts.append("\(result.recordsLeftOut) \(noun)\(result.recordsLeftOut == 1 ? "" : "s") left out")
        }
        if result.recordsDropped > 0 { parts.append("\(result.recordsDropped) older dropped") }
        return "file\(result.filesWritten + result.filesUnchanged == 1 ? "" : "s"): " + parts.joined(separator: " · ")
    }

    /// Milliseconds since 1970 as `Nov 14 22:13` (UTC).
    static func time(_ milliseconds: Int64) -> String {
        formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }

    /// The format of ``time(_:)``: fixed, so that the output is the same everywhere.
    private static let formatter: DateFormatter = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "MMM d HH:mm"
        return formatter
    }()
}
