import ArgumentParser
import FlatCache
import FlatCacheMatrix
import Foundation

/// `flatcache-matrix messages ROOM`: a room's newest cached messages, then
/// the messages its outbox still holds (queued, sending, failed), offline.
struct MessagesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "messages",
        abstract: "Show a room's newest cached messages, oldest first, then its unsent ones (offline).",
        discussion: """
            Reads the folder only, read-only: it works with the server down and changes nothing. \
            The room is found by its id, else by its cached name. Prints a line naming the room \
            and how many of its cached messages are shown, then the newest --limit messages \
            (time, sender, text; "(edited)" after an edited one), then the messages its outbox \
            still holds, each with its state (queued, sending, failed: reason). A room id never \
            synced that has queued messages shows those. Exit status 0, or 1 with an "Error: ..." \
            line for a room that is not cached (and has nothing queued) or a folder \
            'flatcache-matrix sync' has not made. Example: flatcache-matrix messages General \
            --directory Matrix.cache --limit 50
            """)

    @Argument(help: "The room: its id (!...:server) or its cached name.")
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
        let names = try await cache.users.load().reduce(into: [String: String]()) { $0[$1.userID] = $1.nickname }
        guard let found = rooms.first(where: { $0.roomID == room }) ?? rooms.first(where: { $0.name == room }) else {
            // A room id never synced may still have messages queued for it.
            let unsent = try await cache.outbox.entries(in: room)
            guard !unsent.isEmpty else {
                throw ToolError("no cached room has the id or name '\(room)'; 'flatcache-matrix rooms' lists them.")
            }
            print("\(room): not cached yet; \(unsent.count) unsent")
            for entry in unsent { print(Format.line(entry, names: names)) }
            return
        }
        let messages = try await cache.messages.loadLatest(in: found.roomID, limit: limit)
        let total = try await cache.messages.load(in: found.roomID).count
        let unsent = try await cache.outbox.entries(in: found.roomID)
        let note = unsent.isEmpty ? "" : ", then \(unsent.count) unsent"
        print("\(found.name) (\(found.roomID)): the newest \(messages.count) of \(total) cached messages\(note)")
        for message in messages { print(Format.line(message, names: names)) }
        // After the newest message, in the order they are sent.
        for entry in unsent { print(Format.line(entry, names: names)) }
    }
}
