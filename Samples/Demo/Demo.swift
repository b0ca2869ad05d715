import ArgumentParser
import FlatCache
import FlatCacheSampleServer
import Foundation

/// The FlatCache demo: a chat app's start-up, first offline from the cache,
/// then online, replacing the cache with what the (simulated) server sends.
@main
struct Demo: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "flatcache-demo",
        abstract: "Open a chat app offline from FlatCache, then refresh it from a simulated server.",
        discussion: """
            The first run finds the cache empty, goes online and caches the server's data. \
            Run it again: the same screen appears at once from the cache, and saving the \
            unchanged data skips every write.
            """)

    @Option(name: .long, help: "The cache folder. (default: <user caches>/flatcache-demo)")
    var directory: String?

    @Flag(name: .long, help: "Empty the cache first, as when a user logs out.")
    var reset = false

    @Flag(name: .long, help: "Stay offline: only show what is cached.")
    var offline = false

    func run() throws {
        let folder = directory.map { URL(fileURLWithPath: $0) } ?? Self.defaultFolder
        let cache = try ChatCache(directory: folder)
        print("FlatCache demo · cache folder: \(folder.path)")
        if reset {
            try cache.removeAll()
            print("Reset · removed every cached channel, message and user.")
        }

        let started = Date()
        let channels = try cache.channels.load()
        let cachedMessages = try channels.reduce(0) { $0 + (try cache.messages.load(in: $1.channelURL).count) }
        let elapsed = Date().timeIntervalSince(started) * 1000
        if channels.isEmpty {
            print("\nOffline · the cache is empty: nothing to show until the server answers.")
        } else {
            print("\nOffline · read from the cache in \(String(format: "%.1f", elapsed)) ms: "
                + "\(channels.count) channels, \(cachedMessages) messages, \(try cache.users.load().count) users.")
            try showScreen(cache, channels)
        }
        guard !offline else { return }

        let server = try SampleServer()
        print("\nOnline · the simulated server sent \(server.channels.count) channels, "
            + "\(server.messages.count) messages, \(server.users.count) users.")
        let channelResult = try cache.channels.replace(with: server.channels)
        var messageResult = SaveResult()
        for channel in try cache.channels.load() {
            messageResult += try cache.messages.replace(server.messages(in: channel.channelURL), in: channel.channelURL)
        }
        let userResult = try cache.users.save(server.users)
        print("  channels  \(Self.summary(channelResult, leftOut: "open channel"))")
        print("  messages  \(Self.summary(messageResult, leftOut: "unsent message"))")
        print("  users     \(Self.summary(userResult, leftOut: "user"))")

        if channels.isEmpty {
            try showScreen(cache, try cache.channels.load())
            print("\nRun it again to open the same screen offline, from the cache.")
        }
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
        for message in try cache.messages.load(in: newest.channelURL).suffix(3) {
            print("    \(Self.time(message.createdAt))  \(message.sender?.nickname ?? "admin"): \(message.text)")
        }
    }

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

    private static func time(_ milliseconds: Int64) -> String {
        formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }

    private static let formatter: DateFormatter = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "MMM d HH:mm"
        return formatter
    }()

    private static var defaultFolder: URL {
        let caches = FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first
            ?? FileManager.default.temporaryDirectory
        return caches.appendingPathComponent("flatcache-demo", isDirectory: true)
    }
}
