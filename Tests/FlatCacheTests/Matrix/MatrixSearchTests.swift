import FlatCache
import FlatCacheMatrix
import Foundation
import Testing

/// What search finds of a Matrix room (issue 34): a message by its body after
/// its newest edit (`m.replace`), never by the words the edit replaced; a
/// redacted message never; its sender as the filter's sender id. Events as the
/// client-server API sends them, through a cache; and `flatcache-matrix search`
/// on a folder such a cache wrote: no homeserver needed.
@Suite(.timeLimit(.minutes(1))) struct MatrixSearchTests {
    static let room = "!room:example.org"
    static let mina = "@mina:example.org"
    static let bea = "@bea:example.org"

    let folder = try! TemporaryFolder()

    private func event(_ json: String) throws -> MatrixEvent {
        try JSONDecoder().decode(MatrixEvent.self, from: Data(json.utf8))
    }

    /// The message event `id` from `sender`, with `body`, and the newest edit to `edited` bundled when given.
    private func message(_ id: String, from sender: String = mina, _ body: String, edited: String? = nil) throws -> MatrixMessage {
        let relations = edited.map { newBody in
            """
            ,"unsigned":{"m.relations":{"m.replace":{
               "event_id":"$edit-\(id)","type":"m.room.message","sender":"\(sender)","origin_server_ts":1700000060000,
               "content":{"msgtype":"m.text","body":"* \(newBody)","m.new_content":{"msgtype":"m.text","body":"\(newBody)"},
                          "m.relates_to":{"rel_type":"m.replace","event_id":"\(id)"}}}}}
            """
        } ?? ""
        let json = """
            {"event_id":"\(id)","type":"m.room.message","sender":"\(sender)","origin_server_ts":1700000000000,
             "content":{"msgtype":"m.text","body":"\(body)"}\(relations)}
            """
        return try #require(try event(json).message(in: Self.room))
    }

    private func ids(_ cache: MatrixCache, _ text: String, filter: SearchFilter = SearchFilter()) async throws -> [String] {
        try await cache.search.messages(matching: text, filter: filter).hits.map(\.message.eventID)
    }

    @Test func theSearchableTextIsTheBodyAfterTheNewestEdit() throws {
        let plain = try message("$m1", "Lunch at the harbour")
        #expect(plain.searchableText == "Lunch at the harbour")
        #expect(plain.senderID == Self.mina)

        let edited = try message("$m2", "Lunch at the harbour", edited: "Dinner at the station")
        #expect(edited.searchableText == "Dinner at the station")  // m.new_content, not the "* ..." fallback
        #expect(edited.isEdited)
    }

    @Test func aRedactedMessageHasNoSearchableText() throws {
        let redacted = try event("""
            {"event_id":"$m3","type":"m.room.message","sender":"@mina:example.org","origin_server_ts":1700000000000,
             "content":{},
             "unsigned":{"redacted_because":{"event_id":"$r1","type":"m.room.redaction","sender":"@mina:example.org",
                                             "origin_server_ts":1700000090000,"content":{},"redacts":"$m3"}}}
            """)
        // The event is no message at all; a record with its stripped (empty) content is not searched either.
        #expect(redacted.message(in: Self.room) == nil)
        let stripped = MatrixMessage(
            eventID: "$m3", roomID: Self.room, sender: Self.mina, createdAt: 1_700_000_000_000, msgtype: "", body: "")
        #expect(stripped.searchableText == nil)
    }

    @Test func anEditInTheCacheIsFoundByItsNewWordsOnlyAndARedactionNever() async throws {
        // Given a room's messages cached, one about lunch
        let cache = try MatrixCache(directory: folder.url)
        try await cache.messages.save([
            try message("$m1", "Lunch at the harbour"), try message("$m2", from: Self.bea, "See you at the harbour"),
        ])
        #expect(try await ids(cache, "lunch") == ["$m1"])

        // When the server's change log says it was edited, and the other message redacted
        try await cache.messages.applyChangeLog(
            updated: [try message("$m1", "Lunch at the harbour", edited: "Dinner at the station")],
            deletedMessageIDs: ["$m2"], in: Self.room)

        // Then search finds the edit by its new words only, and the redacted message never
        #expect(try await ids(cache, "lunch").isEmpty)
        #expect(try await ids(cache, "dinner") == ["$m1"])
        #expect(try await ids(cache, "harbour").isEmpty)
        let hit = try #require(try await cache.search.messages(matching: "station").hits.first)
        #expect(hit.highlights.map { String(hit.text[$0]) } == ["station"])
        try await cache.close()
    }

    @Test func theSenderFilterMatchesMatrixUserIDs() async throws {
        let cache = try MatrixCache(directory: folder.url)
        try await cache.messages.save([
            try message("$m1", "Lunch at noon"), try message("$m2", from: Self.bea, "Lunch at one"),
        ])
        #expect(try await ids(cache, "lunch", filter: SearchFilter(senderIDs: [Self.bea])) == ["$m2"])
        #expect(try await ids(cache, "lunch", filter: SearchFilter(channelURLs: ["!other:example.org"])).isEmpty)
        try await cache.close()
    }

    @Test func theToolSearchesTheCachedRoomsOfflineByRoomAndSender() async throws {
        // Given a folder as 'flatcache-matrix sync' leaves it: a room, its messages (one edited), a profile
        let cache = try MatrixCache(directory: folder.url)
        try await cache.channels.replace(with: [
            MatrixRoom(roomID: Self.room, name: "Harbour trip", joinedMemberCount: 2, createdAt: 1_600_000_000_000),
            MatrixRoom(roomID: "!other:example.org", name: "Other", joinedMemberCount: 1, createdAt: 1_600_000_000_000),
        ])
        try await cache.messages.save([
            try message("$m1", "Lunch at the harbour", edited: "Dinner at the station"),
            try message("$m2", from: Self.bea, "The station\\nis closed"),
        ])
        try await cache.users.save([ChatUser(userID: Self.mina, nickname: "Mina")])
        try await cache.close()
        func search(_ arguments: [String]) throws -> ToolRun {
            try ToolRun(["search"] + arguments + ["--directory", folder.url.path], of: "flatcache-matrix", in: folder.url)
        }

        // When it searches, Then each hit is one line: time, room name, sender's name (else id), text marked
        let all = try search(["station", "--newest-first"])
        #expect(all.status == 0, "\(all.stderr)")
        let lines = all.stdout.split(separator: "\n")
        #expect(lines.count == 3, "\(all.stdout)")
        #expect(lines.contains { $0.hasSuffix("  Harbour trip  Mina: Dinner at the [station] (edited)") }, "\(all.stdout)")
        #expect(lines.contains { $0.hasSuffix("  Harbour trip  \(Self.bea): The [station] is closed") }, "\(all.stdout)")
        #expect(lines.last == "2 hits, no more")

        let fromBea = try search(["station", "--sender", Self.bea, "--room", "Harbour trip"])
        #expect(fromBea.stdout.split(separator: "\n").count == 2 && fromBea.stdout.hasSuffix("1 hit, no more\n"), "\(fromBea.stdout)")
        let elsewhere = try search(["station", "--room", "!other:example.org"])
        #expect(elsewhere.status == 0 && elsewhere.stdout == "no cached message matches \"station\"\n")
        let lunch = try search(["lunch"])
        #expect(lunch.stdout == "no cached message matches \"lunch\"\n", "the edit replaced its words")

        let unknown = try search(["station", "--room", "Nowhere"])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("no cached room has the id or name 'Nowhere'"), "\(unknown.stderr)")
        let empty = try search([" "])
        #expect(empty.status != 0 && empty.stderr.contains("give words to search for"), "\(empty.stderr)")
        try FileManager.default.createDirectory(at: folder.appending("empty"), withIntermediateDirectories: false)
        let notSynced = try ToolRun(
            ["search", "station", "--directory", folder.appending("empty").path], of: "flatcache-matrix", in: folder.url)
        #expect(notSynced.status == 1 && notSynced.stderr.contains("run 'flatcache-matrix sync' first"), "\(notSynced.stderr)")
    }
}
