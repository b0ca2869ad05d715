import ArgumentParser
import FlatCache
import FlatCacheTesting
import Foundation

/// `flatcache-demo collection`: a message collection and a channel list
/// against the simulated server, one line per event, the same every run.
struct CollectionStory: AsyncParsableCommand {
    /// Its name, and the help that says what it does.
    static let configuration = CommandConfiguration(
        commandName: "collection",
        abstract: "Tell a message collection's story against a simulated server, one line per event.",
        discussion: """
            Online first, the cache fills; then an offline start from the cache, a reconnect that \
            applies edits, deletes and a small gap, channels left and joined, senders resolved \
            through the user directory, and a long offline period that ends in a huge gap and a \
            fresh collection. The cache folder is emptied first, so every run tells the same story. \
            It exits with an error when an expected event does not come within 5 seconds.
            """)

    /// Where the cache lives; `nil` for the default folder.
    @Option(name: .long, help: "The cache folder, emptied first. (default: <user caches>/flatcache-demo-collection)")
    var directory: String?

    /// Tells the story, step by step, then closes the cache.
    func run() async throws {
        let folder = directory.map { URL(fileURLWithPath: $0) } ?? Demo.cachesFolder(named: "flatcache-demo-collection")
        print("FlatCache demo · a message collection against a simulated server")
        print("cache folder: \(folder.path)")
        let cache = try ChatCache(directory: folder)
        // An earlier run's cache would change the first step: every run starts empty.
        try await cache.removeAll()
        let story = Story(cache: cache, server: SimulatedChatServer())
        await story.seedServer()
        try await story.firstRunOnline()
        let (list, collection) = try await story.offlineStart()
        await story.changesWhileOffline()
        try await story.reconnect(list, collection)
        try await story.resolveSenders(of: collection)
        try await story.hugeGap(list, collection)
        try await story.finish()
    }
}
