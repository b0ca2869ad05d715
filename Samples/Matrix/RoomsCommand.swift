import ArgumentParser
import FlatCache
import FlatCacheMatrix
import Foundation

/// `flatcache-matrix rooms`: the cached rooms, newest last message first, offline.
struct RoomsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rooms",
        abstract: "List the cached rooms, newest last message first (offline).",
        discussion: """
            Reads the folder only, read-only: it works with the server down and changes nothing. \
            Prints how many rooms are cached, then one line per room (its name, room id, joined \
            members and cached messages) and, under it, the room's last message (time, sender, \
            text). Exit status 0, or 1 with an "Error: ..." line when the folder is not one \
            'flatcache-matrix sync' made. Example: flatcache-matrix rooms --directory Matrix.cache
            """)

    @OptionGroup var folder: FolderOption

    func run() async throws {
        let cache = try folder.openForReading()
        let rooms = try await cache.channels.load()
        let names = try await cache.users.load().reduce(into: [String: String]()) { $0[$1.userID] = $1.nickname }
        print("\(rooms.count) room\(rooms.count == 1 ? "" : "s") cached in \(folder.directory)")
        for room in rooms {
            let cached = try await cache.messages.load(in: room.roomID).count
            let members = "\(room.joinedMemberCount) member\(room.joinedMemberCount == 1 ? "" : "s")"
            print("\(room.name)  \(room.roomID)  \(members), \(cached) message\(cached == 1 ? "" : "s") cached")
            if let last = room.lastMessage { print("    last: \(Format.line(last, names: names))") }
        }
    }
}
