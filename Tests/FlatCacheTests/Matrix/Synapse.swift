import FlatCache
import FlatCacheMatrix
import Foundation
import Testing

/// The local Synapse that `Scripts/test-matrix` starts (`Scripts/synapse`),
/// and test accounts on it. The Matrix tests run only when
/// `FLATCACHE_MATRIX_TESTS=1` (the script sets it); a plain `swift test`
/// lists them as skipped.
enum Synapse {
    /// Whether the Matrix tests run.
    static let isEnabled = ProcessInfo.processInfo.environment["FLATCACHE_MATRIX_TESTS"] == "1"

    /// The repository's root folder.
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// Runs `Scripts/synapse` with `arguments` and returns its last line of output.
    @discardableResult
    static func script(_ arguments: String...) throws -> String {
        // Output goes to a file, not a pipe: `start` leaves the server running, and it must
        // not hold the pipe open (reading to its end would wait for the server to exit).
        let outputFile = FileManager.default.temporaryDirectory.appendingPathComponent("synapse-\(UUID().uuidString).out")
        _ = FileManager.default.createFile(atPath: outputFile.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: outputFile) }
        let output = try FileHandle(forWritingTo: outputFile)
        defer { try? output.close() }
        let process = Process()
        process.executableURL = repository.appendingPathComponent("Scripts/synapse")
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        let text = try String(contentsOf: outputFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        guard process.terminationStatus == 0 else {
            throw ScriptFailed(description: "Scripts/synapse \(arguments.joined(separator: " ")) exited \(process.terminationStatus): \(text)")
        }
        return text.split(separator: "\n").last.map(String.init) ?? ""
    }

    struct ScriptFailed: Error, CustomStringConvertible {
        var description: String
    }

    /// The application service's token (it stays the same across restarts);
    /// empty when the script cannot tell it, which the server then refuses.
    static let asToken: String = (try? script("as-token")) ?? ""

    /// The running server's URL (its port changes at each start).
    static func url() throws -> URL {
        try #require(URL(string: script("url")))
    }

    /// A new account, `@seed_<name>_<random>:localhost`, registered through
    /// the application service (no password: tests act with its token).
    static func newUser(_ name: String) async throws -> TestUser {
        let service = try MatrixClient(homeserver: try url(), accessToken: asToken)
        let localpart = "seed_\(name)_\(UUID().uuidString.prefix(8).lowercased())"
        let registered: Registered = try await service.post(
            ["register"], body: ["type": "m.login.application_service", "username": localpart])
        return TestUser(userID: registered.userID, client: service.authenticated(with: registered.accessToken))
    }

    /// The answer to an application service's `/register`.
    struct Registered: Decodable {
        var userID: String
        var accessToken: String
        enum CodingKeys: String, CodingKey {
            case userID = "user_id"
            case accessToken = "access_token"
        }
    }
}

/// A test account and what it does on the server.
struct TestUser: Sendable {
    let userID: String
    let client: MatrixClient

    var source: MatrixSource { MatrixSource(client: client) }

    /// The same account on a server that moved (restarted on another port).
    func reconnected(to homeserver: URL) throws -> TestUser {
        TestUser(userID: userID, client: try MatrixClient(homeserver: homeserver, accessToken: client.accessToken))
    }

    func createRoom(_ name: String, inviting others: [TestUser] = []) async throws -> String {
        struct Created: Decodable { var room_id: String }
        struct Request: Encodable { var name: String; var invite: [String]; var preset = "private_chat" }
        let created: Created = try await client.post(["createRoom"], body: Request(name: name, invite: others.map(\.userID)))
        for other in others { try await other.join(created.room_id) }
        return created.room_id
    }

    func join(_ roomID: String) async throws {
        let _: Ignored = try await client.post(["join", roomID], body: [String: String]())
    }

    func leave(_ roomID: String) async throws {
        let _: Ignored = try await client.post(["rooms", roomID, "leave"], body: [String: String]())
    }

    @discardableResult
    func send(_ text: String, in roomID: String) async throws -> String {
        try await sendEvent(["msgtype": .string("m.text"), "body": .string(text)], in: roomID)
    }

    /// Sends `count` messages, `parallel` at a time; their texts are `"<prefix> <n>"`.
    func send(_ count: Int, _ prefix: String, in roomID: String, parallel: Int = 6) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for batch in stride(from: 0, to: count, by: parallel) {
                for index in batch..<min(batch + parallel, count) {
                    group.addTask { try await send("\(prefix) \(index)", in: roomID) }
                }
                try await group.waitForAll()
            }
        }
    }

    /// Sends `text` with the server time `timestamp` (through the application
    /// service, which may set `ts`): many messages can share one millisecond.
    @discardableResult
    func send(_ text: String, in roomID: String, at timestamp: Int64) async throws -> String {
        struct Sent: Decodable { var event_id: String }
        let service = try MatrixClient(homeserver: client.homeserver, accessToken: Synapse.asToken)
        let sent: Sent = try await service.put(
            ["rooms", roomID, "send", "m.room.message", UUID().uuidString],
            query: [("user_id", userID), ("ts", String(timestamp))], body: ["msgtype": "m.text", "body": text])
        return sent.event_id
    }

    @discardableResult
    func edit(_ eventID: String, in roomID: String, to text: String) async throws -> String {
        try await sendEvent([
            "msgtype": .string("m.text"), "body": .string("* \(text)"),
            "m.new_content": .object(["msgtype": .string("m.text"), "body": .string(text)]),
            "m.relates_to": .object(["rel_type": .string("m.replace"), "event_id": .string(eventID)]),
        ], in: roomID)
    }

    func redact(_ eventID: String, in roomID: String) async throws {
        let _: Ignored = try await client.put(
            ["rooms", roomID, "redact", eventID, UUID().uuidString], body: [String: String]())
    }

    func setDisplayName(_ name: String) async throws {
        let _: Ignored = try await client.put(["profile", userID, "displayname"], body: ["displayname": name])
    }

    func setRoomName(_ name: String, in roomID: String) async throws {
        let _: Ignored = try await client.put(["rooms", roomID, "state", "m.room.name", ""], body: ["name": name])
    }

    /// Every message of the room as the server's own `/messages` gives it,
    /// oldest first, edits applied, redacted ones left out.
    func serverMessages(in roomID: String) async throws -> [MatrixMessage] {
        var messages = [MatrixMessage]()
        var from: String?
        for _ in 0..<100 {
            var query = [("dir", "f"), ("limit", "100")]
            if let from { query.append(("from", from)) }
            let page: Page = try await client.get(["rooms", roomID, "messages"], query: query)
            messages += page.chunk.compactMap { $0.message(in: roomID) }
            guard let end = page.end, !page.chunk.isEmpty else { break }
            from = end
        }
        return messages
    }

    private struct Page: Decodable {
        var chunk: [MatrixEvent]
        var end: String?
    }

    private func sendEvent(_ content: [String: JSON], in roomID: String) async throws -> String {
        struct Sent: Decodable { var event_id: String }
        let sent: Sent = try await client.put(
            ["rooms", roomID, "send", "m.room.message", UUID().uuidString], body: JSON.object(content))
        return sent.event_id
    }
}

/// An answer whose fields the tests do not read.
struct Ignored: Decodable {}

/// Just enough JSON to write event contents.
indirect enum JSON: Encodable, Sendable {
    case string(String)
    case object([String: JSON])

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let text): try container.encode(text)
        case .object(let fields): try container.encode(fields)
        }
    }
}
