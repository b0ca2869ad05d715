import FlatCache
import FlatCacheMatrix
import Foundation
import Testing

/// `MatrixSource.prefetchNewestPages`: a first sync's pages and token from one
/// `/sync`, and never an answer older than a live one (a scripted homeserver).
@Suite(.timeLimit(.minutes(1)))
struct MatrixPrefetchTests {
    private static func message(_ id: String, at time: Int64) -> String {
        #"{"event_id":"\#(id)","type":"m.room.message","sender":"@kai:example.org","origin_server_ts":\#(time),"#
            + #""content":{"msgtype":"m.text","body":"\#(id)"}}"#
    }

    /// An initial sync holding the room's whole history: three messages, two in one millisecond.
    private static let prefetch = StubHomeserver.Response(200, #"{"next_batch":"s1","rooms":{"join":{"!r:example.org":"#
        + #"{"timeline":{"limited":false,"prev_batch":"p1","events":["#
        + [message("$a", at: 1_000), message("$c", at: 2_000), message("$b", at: 2_000)].joined(separator: ",") + "]}}}}}")

    @Test func theNewestPageAndTokenComeFromThePrefetchUntilALiveAnswerBringsNews() async throws {
        // The live loop goes on polling at its own pace while the test asks
        // for the token, so every answer after the new message is the same
        // (a fixed script ran out under load: CI, stop 40).
        let stub = try StubHomeserver(
            [
                Self.prefetch,
                // The live long poll from the prefetch's token: a new message.
                .init(200, #"{"next_batch":"s2","rooms":{"join":{"!r:example.org":{"timeline":{"events":["# + Self.message("$d", at: 3_000) + "]}}}}}"),
            ],
            afterwards: .init(200, #"{"next_batch":"s3"}"#))
        defer { stub.stop() }
        // The client's default deadline (30 s): under ThreadSanitizer a request to the stub has taken over 5 s.
        var source = MatrixSource(client: try MatrixClient(homeserver: stub.url, accessToken: "token"))
        source.pollTimeout = 1

        // Given a prefetch
        #expect(try await source.prefetchNewestPages(eventsPerRoom: 100) == ["!r:example.org"])

        // Then the room's newest page (ties in the collection's order) and its token need no request
        let page = try await source.messages(in: "!r:example.org", .before, .max, limit: 2)
        #expect(page.messages.map(\.eventID) == ["$b", "$c"])
        #expect(page.hasMore)
        #expect(try await source.changeLogToken(in: "!r:example.org") == "s1")
        #expect(stub.requests.count == 1)

        // When live events start from the prefetch's token and bring a message
        let live = await source.liveEvents()
        var iterator = live.makeAsyncIterator()
        let first = await iterator.next()
        guard case .messageAdded(let added)? = first else {
            Issue.record("expected the live message, got \(String(describing: first))")
            return
        }
        #expect(added.eventID == "$d")
        #expect(stub.requests.filter { $0.contains("since=s1") }.count == 1)

        // Then the prefetch no longer answers: a collection starting now reads the server
        #expect(try await source.changeLogToken(in: "!r:example.org") == "s3")
    }

    /// An edit of `id` by `sender`, made at `time`.
    private static func edit(_ id: String, of original: String, by sender: String, to body: String, at time: Int64) -> String {
        #"{"event_id":"\#(id)","type":"m.room.message","sender":"\#(sender)","origin_server_ts":\#(time),"#
            + #""content":{"msgtype":"m.text","body":"* \#(body)","m.new_content":{"msgtype":"m.text","body":"\#(body)"},"#
            + #""m.relates_to":{"rel_type":"m.replace","event_id":"\#(original)"}}}"#
    }

    @Test func aWholeTimelinesEditsAreAppliedAsTheServerBundlesThem() async throws {
        // Given a room's whole history, which Synapse sends without bundled edits:
        // two edits by the sender (the newer wins) and one by someone else (not allowed)
        let events = [
            Self.message("$a", at: 1_000),
            Self.edit("$e1", of: "$a", by: "@kai:example.org", to: "first edit", at: 1_100),
            Self.edit("$e2", of: "$a", by: "@kai:example.org", to: "second edit", at: 1_200),
            Self.edit("$e3", of: "$a", by: "@eve:example.org", to: "not hers to edit", at: 1_300),
        ]
        let stub = try StubHomeserver([
            .init(200, #"{"next_batch":"s1","rooms":{"join":{"!r:example.org":{"timeline":{"limited":false,"events":["#
                + events.joined(separator: ",") + "]}}}}}")
        ])
        defer { stub.stop() }
        let source = MatrixSource(client: try MatrixClient(homeserver: stub.url, accessToken: "token"))
        try await source.prefetchNewestPages(eventsPerRoom: 100)

        // Then the page is the message, with its sender's newest edit, as `/messages` would show it
        let page = try await source.messages(in: "!r:example.org", .before, .max, limit: 10)
        #expect(page.messages.map(\.eventID) == ["$a"])
        #expect(page.messages.map(\.body) == ["second edit"])
        #expect(!page.hasMore)
        #expect(stub.requests.count == 1)
    }

    @Test func endPrefetchSendsEveryLaterCallToTheServer() async throws {
        let stub = try StubHomeserver([Self.prefetch, .init(200, #"{"next_batch":"s9"}"#)])
        defer { stub.stop() }
        let source = MatrixSource(client: try MatrixClient(homeserver: stub.url, accessToken: "token"))
        try await source.prefetchNewestPages(eventsPerRoom: 100)
        #expect(try await source.changeLogToken(in: "!r:example.org") == "s1")
        await source.endPrefetch()
        #expect(try await source.changeLogToken(in: "!r:example.org") == "s9")
        #expect(stub.requests.count == 2)
    }
}
