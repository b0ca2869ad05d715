import ArgumentParser
import FlatCache
import FlatCacheMatrix
import Foundation

/// `flatcache-matrix send`: sends a text message to a room (created when the
/// account has none of that name), so that a fresh account has something to cache.
struct SendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send a text message to a room, creating the room when the account has none of that name (online).")

    @Argument(help: "The message text.")
    var text: String

    @Option(name: .long, help: "The room: its id (!…:server), or a name (a room of that name is created if none is joined).")
    var room: String

    @OptionGroup var login: LoginOptions

    func run() async throws {
        let account = try await login.account()
        let client = account.client
        let source = MatrixSource(client: client)
        let roomID: String
        if room.hasPrefix("!") {
            roomID = room
        } else if let joined = try await source.channels(from: nil, limit: 1_000).channels.first(where: { $0.name == room }) {
            roomID = joined.roomID
        } else {
            let created: Created = try await client.post(["createRoom"], body: ["name": room, "preset": "private_chat"])
            roomID = created.roomID
            print("created room \(room) (\(roomID))")
        }
        let sent: Sent = try await client.put(
            ["rooms", roomID, "send", "m.room.message", UUID().uuidString], body: ["msgtype": "m.text", "body": text])
        print("sent \(sent.eventID) to \(roomID)")
    }

    private struct Created: Decodable {
        var roomID: String
        enum CodingKeys: String, CodingKey { case roomID = "room_id" }
    }

    private struct Sent: Decodable {
        var eventID: String
        enum CodingKeys: String, CodingKey { case eventID = "event_id" }
    }
}
