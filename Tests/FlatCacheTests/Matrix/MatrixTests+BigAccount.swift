import FlatCache
import FlatCacheMatrix
import Foundation
import Testing

/// A real account of dozens of rooms (``BigAccount``: 60 rooms of 2 messages,
/// 3 of 500 with ties, an edit and a redaction) through the sample's
/// `flatcache-matrix`, the built executable. In ``MatrixTests``, serialized
/// with the test that stops the server.
extension MatrixTests {
    @Test func theFirstSyncOfSixtyThreeRoomsCachesEveryRoomAsTheServersMessagesShowIt() async throws {
        // Given an account of 63 rooms
        let account = try await BigAccount.shared()
        let client = try MatrixClient(homeserver: try Synapse.url(), accessToken: account.accessToken)

        // When the sample syncs it for the first time
        let run = try ToolRun(
            ["sync", "--homeserver", try Synapse.url().absoluteString, "--access-token", account.accessToken,
             "--directory", folder.url.path],
            of: "flatcache-matrix", in: folder.url, timeLimit: .seconds(120))
        #expect(run.status == 0, "\(run.stdout.suffix(2_000))\(run.stderr.suffix(2_000))")
        #expect(run.stdout.contains("[63/63] "), "\(run.stdout.suffix(2_000))")

        // Then each room's cache is the server's newest page (50), in the collection's order
        let cache = try MatrixCache(directory: folder.url, configuration: Configuration(maxMessagesPerChannel: 2_000))
        for roomID in account.rooms {
            let server = try await serverMessages(in: roomID, client: client)
            let cached = try await cache.messages.load(in: roomID)
            #expect(cached == Array(server.suffix(50)), "room \(roomID): \(cached.count) cached, \(server.count) on the server")
            #expect(try await cache.messages.continuity(in: roomID).changeLogToken != nil)
        }
        #expect(try await cache.channels.load().count == 63)
        // and the big rooms' edit and redaction are the server's
        for roomID in account.bigRooms {
            let cached = try await cache.messages.load(in: roomID)
            #expect(cached.count { $0.body.hasSuffix(" edited") } == 1)
            #expect(cached.count == 50)
        }
        try await cache.close()
    }
}

/// Every message of the room as `/messages` gives it (edits applied, redacted
/// ones left out), in the collection's order: time, then id.
func serverMessages(in roomID: String, client: MatrixClient) async throws -> [MatrixMessage] {
    struct Page: Decodable {
        var chunk: [MatrixEvent]
        var end: String?
    }
    var messages = [MatrixMessage]()
    var from: String?
    for _ in 0..<100 {
        var query = [("dir", "b"), ("limit", "500"), ("filter", #"{"types":["m.room.message"]}"#)]
        if let from { query.append(("from", from)) }
        let page: Page = try await client.get(["rooms", roomID, "messages"], query: query)
        messages += page.chunk.compactMap { $0.message(in: roomID) }
        guard let end = page.end, !page.chunk.isEmpty else { break }
        from = end
    }
    return messages.sorted { ($0.createdAt, $0.eventID) < ($1.createdAt, $1.eventID) }
}

extension BigAccount {
    /// One account for the whole test run, seeded at first use, or the one
    /// an earlier run seeded on the same server (its token still works and
    /// it has its 63 rooms): seeding takes most of a minute, or more on a busy
    /// machine, and the tests only add to the account (each reads the server afresh).
    private static let seeded = Task { () throws -> BigAccount in
        let homeserver = try Synapse.url()
        if let saved = try? Data(contentsOf: savedAccount), let account = try? JSONDecoder().decode(Saved.self, from: saved),
            let client = try? MatrixClient(homeserver: homeserver, accessToken: account.accessToken),
            let joined: Joined = try? await client.get(["joined_rooms"]),
            Set(joined.joined_rooms) == Set(account.smallRooms + account.bigRooms)
        {
            return BigAccount(
                userID: account.userID, accessToken: account.accessToken, client: client, smallRooms: account.smallRooms,
                bigRooms: account.bigRooms, seedingSeconds: 0)
        }
        let account = try await BigAccount.seed(homeserver: homeserver, asToken: Synapse.asToken)
        print("BigAccount: seeded 63 rooms, 1,620 messages in \(String(format: "%.1f", account.seedingSeconds)) s")
        let saved = Saved(userID: account.userID, accessToken: account.accessToken, smallRooms: account.smallRooms, bigRooms: account.bigRooms)
        try? JSONEncoder().encode(saved).write(to: savedAccount)
        return account
    }

    /// Where the seeded account is remembered: beside the server's database (Scripts/synapse's state folder).
    private static var savedAccount: URL {
        let state = ProcessInfo.processInfo.environment["FLATCACHE_SYNAPSE_DIR"].map { URL(fileURLWithPath: $0) }
            ?? Synapse.repository.appendingPathComponent(".build/synapse")
        return state.appendingPathComponent("big-account.json")
    }

    private struct Saved: Codable {
        var userID: String
        var accessToken: String
        var smallRooms: [String]
        var bigRooms: [String]
    }

    private struct Joined: Decodable { var joined_rooms: [String] }

    /// The run's big account.
    static func shared() async throws -> BigAccount {
        try await seeded.value
    }
}

extension MatrixTests {
    @Test(.enabled(if: OpenConnections.areReadable, "counts connections through /proc (Linux)"))
    func followingSixtyRoomsKeepsTwoConnectionsCachesEveryEventAndEndsSoonAfterCtrlC() async throws {
        // Given the sample following the big account
        let account = try await BigAccount.shared()
        let url = try Synapse.url()
        let client = try MatrixClient(homeserver: url, accessToken: account.accessToken)
        let cacheFolder = folder.url.appendingPathComponent("cache")
        let output = folder.url.appendingPathComponent("follow.out")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let handle = try FileHandle(forWritingTo: output)
        defer { try? handle.close() }
        let process = Process()
        process.executableURL = Executables.url("flatcache-matrix")
        process.arguments = [
            "sync", "--follow", "--homeserver", url.absoluteString, "--access-token", account.accessToken,
            "--directory", cacheFolder.path,
        ]
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        let pid = process.processIdentifier
        defer { if process.isRunning { kill(pid, SIGKILL) } }
        let shown = { (try? String(contentsOf: output, encoding: .utf8)) ?? "" }
        for _ in 0..<1_200 where !shown().contains("following live events") && process.isRunning {
            try await Task.sleep(for: .milliseconds(100))
        }
        try #require(shown().contains("following live events"), "\(shown().suffix(2_000))")

        // When, for 40 s, messages arrive in 20 rooms, and an edit and a redaction
        let rooms = Array(account.smallRooms.prefix(20))
        let service = try MatrixClient(homeserver: url, accessToken: Synapse.asToken)
        let traffic = Task { () throws -> Void in
            var sent = [String]()
            for round in 0..<3 {
                for (index, room) in rooms.enumerated() {
                    sent.append(try await service.sendText("live \(index).\(round)", in: room, as: account.userID))
                    try await Task.sleep(for: .milliseconds(400))
                }
            }
            try await service.editText(sent[0], to: "live 0.0 edited", in: rooms[0], as: account.userID)
            try await service.redact(sent[1], in: rooms[1], as: account.userID)
        }
        // A connection URLSession lets go (a request past its deadline, say) is closed a moment
        // later, on its queue, while the next one may open: a count over 2 is confirmed by two
        // more counts 100 ms apart before it is taken as connections held at once.
        var most = 0
        var peak = 0
        var samples = [String]()
        let started = ContinuousClock.now
        while ContinuousClock.now - started < .seconds(40), process.isRunning {
            var ports = OpenConnections.localPorts(of: pid, toPort: url.port ?? 80)
            samples.append("\(ContinuousClock.now - started): \(ports.sorted())")
            peak = max(peak, ports.count)
            for _ in 0..<2 where ports.count > 2 {
                try await Task.sleep(for: .milliseconds(100))
                let again = OpenConnections.localPorts(of: pid, toPort: url.port ?? 80)
                samples.append("\(ContinuousClock.now - started): \(again.sorted()) (again)")
                if again.count < ports.count { ports = again }
            }
            most = max(most, ports.count)
            try await Task.sleep(for: .milliseconds(200))
        }
        if peak > 2 {
            print("connections to the homeserver, by count (local ports):\n" + samples.joined(separator: "\n"))
        }
        try await traffic.value

        // Then at most 2 connections were open at once, and Ctrl-C ends it within 10 s
        print("following 60 rooms: at most \(most) connections to the homeserver open at once")
        #expect(most <= 2, "\(most) connections to the homeserver were open at once")
        kill(pid, SIGINT)
        let interrupted = ContinuousClock.now
        while process.isRunning, ContinuousClock.now - interrupted < .seconds(30) { try await Task.sleep(for: .milliseconds(50)) }
        let stopping = ContinuousClock.now - interrupted
        #expect(!process.isRunning && stopping < .seconds(10), "still running \(stopping) after SIGINT")
        #expect(process.isRunning || process.terminationStatus == 0, "\(shown().suffix(2_000))")
        if process.isRunning { kill(pid, SIGKILL) }

        // and every event is in the cache: each room as the server shows it
        let cache = try MatrixCache(directory: cacheFolder, configuration: Configuration(maxMessagesPerChannel: 2_000))
        for roomID in rooms {
            let server = try await serverMessages(in: roomID, client: client)
            let cached = try await cache.messages.load(in: roomID)
            #expect(cached == server, "room \(roomID): \(cached.count) cached, \(server.count) on the server")
        }
        #expect(try await cache.messages.load(in: rooms[0]).contains { $0.body == "live 0.0 edited" })
        try await cache.close()
    }
}

extension MatrixClient {
    /// Sends `text` as `userID`, an application service's user (`self` holds the service's token).
    fileprivate func sendText(_ text: String, in roomID: String, as userID: String) async throws -> String {
        struct Sent: Decodable { var event_id: String }
        let sent: Sent = try await put(
            ["rooms", roomID, "send", "m.room.message", UUID().uuidString], query: [("user_id", userID)],
            body: ["msgtype": "m.text", "body": text])
        return sent.event_id
    }

    fileprivate func editText(_ eventID: String, to text: String, in roomID: String, as userID: String) async throws {
        let _: Ignored = try await put(
            ["rooms", roomID, "send", "m.room.message", UUID().uuidString], query: [("user_id", userID)],
            body: JSON.object([
                "msgtype": .string("m.text"), "body": .string("* \(text)"),
                "m.new_content": .object(["msgtype": .string("m.text"), "body": .string(text)]),
                "m.relates_to": .object(["rel_type": .string("m.replace"), "event_id": .string(eventID)]),
            ]))
    }

    fileprivate func redact(_ eventID: String, in roomID: String, as userID: String) async throws {
        let _: Ignored = try await put(
            ["rooms", roomID, "redact", eventID, UUID().uuidString], query: [("user_id", userID)], body: [String: String]())
    }
}
