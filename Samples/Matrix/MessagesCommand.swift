import ArgumentParser
import FlatCache
import FlatCacheMatrix
import Foundation

/// `flatcache-matrix messages ROOM`: a room's newest cached messages, offline.
struct MessagesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "messages", abstract: "Show a room's newest cached messages, oldest first (offline).")

    @Argument(help: "The room: its id (!…:server) or its cached name.")
    var room: String

    @Option(name: .long, help: "How many messages to show, at least 1.")
    var limit = 20

    @OptionGroup var folder: FolderOption

    func validate() throws {
        guard limit >= 1 else { throw ValidationError("--limit must be 1 or more, not \(limit).") }
    }

    func run() async throws {
        let cache = try folder.openForReading()
        let rooms = try await cache.channels.load()
        guard let found = rooms.first(where: { $0.roomID == room }) ?? rooms.first(where: { $0.name == room }) else {
            throw ToolError("no cached room has the id or name '\(room)'; 'flatcache-matrix rooms' lists them.")
        }
        let messages = try await cache.messages.loadLatest(in: found.roomID, limit: limit)
        let names = try await cache.users.load().reduce(into: [String: String]()) { $0[$1.userID] = $1.nickname }
        let total = try await cache.messages.load(in: found.roomID).count
        print("\(found.name) (\(found.roomID)): the newest \(messages.count) of \(total) cached messages")
        for message in messages { print(Format.line(message, names: names)) }
    }
}
