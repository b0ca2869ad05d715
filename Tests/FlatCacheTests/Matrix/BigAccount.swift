import FlatCacheMatrix
import Foundation

/// A big Matrix account on the local Synapse (`Scripts/synapse`): dozens of
/// joined rooms with a few messages each, and a few rooms of hundreds of
/// messages, seeded fast through the application service, which owns
/// `@seed_*` users and may back-date events (`?ts=`).
///
/// The big rooms' messages come four to a millisecond (ties, as in a burst),
/// and each big room holds an edit of a recent message and a redacted one,
/// so that a cache of them shows the server's order and changes, not only its messages.
/// Shared by the Synapse tests and `flatcache-bench matrix` (a symbolic link there).
struct BigAccount: Sendable {
    /// The account, `@seed_big_<random>:localhost`.
    let userID: String
    /// Its access token (from the application service's registration).
    let accessToken: String
    /// The account's client.
    let client: MatrixClient
    /// The rooms of a few messages each.
    let smallRooms: [String]
    /// The rooms of many messages each.
    let bigRooms: [String]
    /// How long seeding took, in seconds.
    let seedingSeconds: Double

    /// Every joined room.
    var rooms: [String] { smallRooms + bigRooms }

    /// How many rooms, and messages in each, to seed.
    struct Shape: Sendable {
        var smallRooms = 60
        var messagesPerSmallRoom = 2
        var bigRooms = 3
        var messagesPerBigRoom = 500
        /// Requests in flight at once (a big room's messages are sent one at a time,
        /// as Synapse writes them): URLSession's connections per host.
        var parallel = 6
    }

    /// Registers a new account through the application service and seeds its rooms.
    ///
    /// - Parameters:
    ///   - homeserver: The server's URL (`Scripts/synapse url`).
    ///   - asToken: The application service's token (`Scripts/synapse as-token`).
    ///   - shape: How many rooms and messages.
    ///   - progress: Told a line per step (rooms created, messages sent).
    static func seed(
        homeserver: URL, asToken: String, shape: Shape = Shape(), progress: @escaping @Sendable (String) -> Void = { _ in }
    ) async throws -> BigAccount {
        let started = ContinuousClock.now
        let service = try MatrixClient(homeserver: homeserver, accessToken: asToken)
        let localpart = "seed_big_\(UUID().uuidString.prefix(8).lowercased())"
        let registered: Registered = try await service.post(
            ["register"], body: ["type": "m.login.application_service", "username": localpart])
        let user = service.authenticated(with: registered.accessToken)

        // Back-dated a day, a distinct minute per small room and hour per big room: the list's order is fixed.
        let base = Int64(Date().timeIntervalSince1970 * 1_000) - 86_400_000
        let userID = registered.userID
        // Synapse writes one room's events one at a time: each big room gets a sender of its own,
        // and the small rooms, a few at a time, go beside them (the client's 6 connections in all).
        async let big = inParallel(Array(0..<shape.bigRooms), shape.bigRooms) { index -> (String, [String]) in
            let room: Created = try await user.post(["createRoom"], body: ["name": "Big \(index + 1)", "preset": "private_chat"])
            let start = base + 3_600_000 * Int64(index + 1)
            var sent = [String]()
            for message in 0..<shape.messagesPerBigRoom {
                // Four to a millisecond, 10 ms apart.
                sent.append(try await service.sendMessage(
                    "big \(index + 1).\(message)", in: room.roomID, as: userID, at: start + Int64(message / 4) * 10))
            }
            return (room.roomID, sent)
        }
        let small = try await inParallel(Array(0..<shape.smallRooms), max(shape.parallel - shape.bigRooms, 1)) { index -> String in
            let room: Created = try await user.post(
                ["createRoom"], body: ["name": String(format: "Room %02d", index + 1), "preset": "private_chat"])
            for message in 0..<shape.messagesPerSmallRoom {
                try await service.sendMessage(
                    "small \(index + 1).\(message)", in: room.roomID, as: userID, at: base + Int64(index) * 60_000 + Int64(message))
            }
            return room.roomID
        }
        progress("seeded \(small.count) small rooms in \(seconds(since: started))")
        let bigRooms = try await big
        progress("seeded \(bigRooms.count) big rooms in \(seconds(since: started))")

        // An edit of a recent message and a redaction of another in each big room: both in the newest page.
        for (index, (room, sent)) in bigRooms.enumerated() where sent.count >= 10 {
            let _: Sent = try await user.put(
                ["rooms", room, "send", "m.room.message", UUID().uuidString],
                body: EditContent(body: "* big \(index + 1) edited", newBody: "big \(index + 1) edited", eventID: sent[sent.count - 5]))
            let _: Redacted = try await user.put(
                ["rooms", room, "redact", sent[sent.count - 9], UUID().uuidString], body: [String: String]())
        }
        let elapsed = ContinuousClock.now - started
        return BigAccount(
            userID: userID, accessToken: registered.accessToken, client: user, smallRooms: small, bigRooms: bigRooms.map(\.0),
            seedingSeconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    // MARK: - Requests

    /// The application service's `/register` answer. Declared here, not taken from the tests'
    /// `Synapse`: this file is shared with `flatcache-bench` (a symbolic link), which has no `Synapse`.
    private struct Registered: Decodable {
        var userID: String
        var accessToken: String
        enum CodingKeys: String, CodingKey {
            case userID = "user_id"
            case accessToken = "access_token"
        }
    }

    private struct Created: Decodable {
        var roomID: String
        enum CodingKeys: String, CodingKey { case roomID = "room_id" }
    }

    private struct Sent: Decodable {
        var eventID: String
        enum CodingKeys: String, CodingKey { case eventID = "event_id" }
    }

    private struct Redacted: Decodable {}

    /// An `m.replace` edit's content.
    private struct EditContent: Encodable {
        var body: String
        var newBody: String
        var eventID: String

        func encode(to encoder: any Encoder) throws {
            struct Text: Encodable { var msgtype = "m.text"; var body: String }
            struct Relation: Encodable { var rel_type = "m.replace"; var event_id: String }
            enum Keys: String, CodingKey { case msgtype, body, newContent = "m.new_content", relatesTo = "m.relates_to" }
            var container = encoder.container(keyedBy: Keys.self)
            try container.encode("m.text", forKey: .msgtype)
            try container.encode(body, forKey: .body)
            try container.encode(Text(body: newBody), forKey: .newContent)
            try container.encode(Relation(event_id: eventID), forKey: .relatesTo)
        }
    }

    /// `transform` of each element, `width` at a time, results in the elements' order.
    private static func inParallel<Element: Sendable, Result: Sendable>(
        _ elements: [Element], _ width: Int, _ transform: @escaping @Sendable (Element) async throws -> Result
    ) async throws -> [Result] {
        try await withThrowingTaskGroup(of: (Int, Result).self) { group in
            var results = [Result?](repeating: nil, count: elements.count)
            var next = 0
            for _ in 0..<max(width, 1) where next < elements.count {
                let (index, element) = (next, elements[next])
                group.addTask { (index, try await transform(element)) }
                next += 1
            }
            while let (index, result) = try await group.next() {
                results[index] = result
                if next < elements.count {
                    let (index, element) = (next, elements[next])
                    group.addTask { (index, try await transform(element)) }
                    next += 1
                }
            }
            return results.compactMap { $0 }
        }
    }

    private static func seconds(since start: ContinuousClock.Instant) -> String {
        (ContinuousClock.now - start).formatted(.units(allowed: [.seconds, .milliseconds], width: .narrow))
    }
}

extension MatrixClient {
    /// Sends a text message as `userID` (an application service's user) with the server time `ts`.
    @discardableResult
    fileprivate func sendMessage(
        _ body: String, in roomID: String, as userID: String, at ts: Int64
    ) async throws -> String {
        struct Sent: Decodable { var event_id: String }
        let sent: Sent = try await put(
            ["rooms", roomID, "send", "m.room.message", UUID().uuidString],
            query: [("user_id", userID), ("ts", String(ts))], body: ["msgtype": "m.text", "body": body])
        return sent.event_id
    }
}
