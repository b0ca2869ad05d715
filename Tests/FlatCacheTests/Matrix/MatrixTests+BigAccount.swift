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
        let account = try await BigAccount.seed(homeserver: try Synapse.url(), asToken: Synapse.asToken)
        print("BigAccount: seeded 63 rooms, 1,620 messages in \(String(format: "%.1f", account.seedingSeconds)) s")

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
            let server = try await serverMessages(in: roomID, client: account.client)
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
