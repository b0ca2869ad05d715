import ArgumentParser
import FlatCache
import FlatCacheMatrix
import Foundation

/// `flatcache-matrix rooms`: the cached rooms, newest last message first, offline.
struct RoomsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rooms", abstract: "List the cached rooms, newest last message first (offline).")

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
