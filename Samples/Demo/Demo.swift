import ArgumentParser
import Foundation

/// The FlatCache demo: `start` (the default) opens a chat app from the cache,
/// then refreshes it; `collection` tells a message collection's story;
/// `outbox` tells the outbox's (and runs the hidden `outbox-app` as its app).
@main
struct Demo: AsyncParsableCommand {
    /// The subcommands; `start` runs when none is named, so `flatcache-demo --offline` works as before.
    static let configuration = CommandConfiguration(
        commandName: "flatcache-demo",
        abstract: "FlatCache in a chat app, against a simulated server.",
        subcommands: [StartScreen.self, CollectionStory.self, OutboxStory.self, OutboxApp.self],
        defaultSubcommand: StartScreen.self)

    /// The folder `name` in the user's caches (the temporary folder where there is none).
    static func cachesFolder(named name: String) -> URL {
        let caches = FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first
            ?? FileManager.default.temporaryDirectory
        return caches.appendingPathComponent(name, isDirectory: true)
    }
}
