import FlatCacheMatrix
import Foundation
import Testing

/// ``MatrixClient`` against ``StubHomeserver``: rate-limit retries, Matrix
/// errors, URLs and headers. No homeserver needed: these always run.
@Suite struct MatrixClientTests {
    /// `/joined_rooms`'s answer, as a response type to decode.
    struct JoinedRooms: Decodable, Equatable {
        var joinedRooms: [String]
        enum CodingKeys: String, CodingKey { case joinedRooms = "joined_rooms" }
    }

    /// Any JSON object.
    struct Empty: Decodable {}

    static let rateLimited = StubHomeserver.Response(
        429, #"{"errcode":"M_LIMIT_EXCEEDED","error":"Too many requests","retry_after_ms":50}"#)
    static let joined = StubHomeserver.Response(200, #"{"joined_rooms":["!a:example.org"]}"#)

    /// A client for `stub`, with the default deadline (30 s): under ThreadSanitizer beside the
    /// whole suite a request to the stub has taken over 5 s.
    private func client(for stub: StubHomeserver, token: String? = "token") throws -> MatrixClient {
        try MatrixClient(homeserver: stub.url, accessToken: token)
    }

    @Test func aRateLimitedRequestIsRetriedAfterTheServersWait() async throws {
        let stub = try StubHomeserver([Self.rateLimited, Self.joined])
        defer { stub.stop() }
        let started = ContinuousClock.now
        let rooms: JoinedRooms = try await client(for: stub).get(["joined_rooms"])
        #expect(rooms == JoinedRooms(joinedRooms: ["!a:example.org"]))
        #expect(ContinuousClock.now - started >= .milliseconds(50))  // retry_after_ms
        #expect(stub.requests == ["GET /_matrix/client/v3/joined_rooms", "GET /_matrix/client/v3/joined_rooms"])
    }

    @Test func aServerThatKeepsRateLimitingEndsAsRateLimitedAfterTheLastRetry() async throws {
        // A fourth request would succeed: the client must not send it.
        let stub = try StubHomeserver([Self.rateLimited, Self.rateLimited, Self.rateLimited, Self.joined])
        defer { stub.stop() }
        var client = try client(for: stub)
        client.maxRateLimitRetries = 2
        let error = await #expect(throws: MatrixError.self) { try await client.get(["joined_rooms"]) as JoinedRooms }
        guard case .rateLimited(let after)? = error else {
            Issue.record("expected .rateLimited, got \(String(describing: error))")
            return
        }
        #expect(after == 50)
        #expect(stub.requests.count == 3)
    }

    @Test(arguments: [true, false])
    func anUnknownTokenIsNotRetried(softLogout: Bool) async throws {
        let stub = try StubHomeserver([
            .init(401, #"{"errcode":"M_UNKNOWN_TOKEN","error":"Invalid access token passed.","soft_logout":\#(softLogout)}"#),
            Self.joined,
        ])
        defer { stub.stop() }
        let client = try client(for: stub)
        let error = await #expect(throws: MatrixError.self) { try await client.get(["joined_rooms"]) as JoinedRooms }
        guard case .unknownToken(let soft)? = error else {
            Issue.record("expected .unknownToken, got \(String(describing: error))")
            return
        }
        #expect(soft == softLogout)
        #expect(error?.errcode == "M_UNKNOWN_TOKEN")
        #expect(stub.requests.count == 1)
    }

    @Test func aMatrixErrorIsThrownWithItsStatusCodeAndMessage() async throws {
        let stub = try StubHomeserver([.init(404, #"{"errcode":"M_NOT_FOUND","error":"Event not found."}"#)])
        defer { stub.stop() }
        let client = try client(for: stub)
        let error = await #expect(throws: MatrixError.self) { try await client.get(["rooms", "!a:example.org"]) as Empty }
        guard case .server(let status, let errcode, let message)? = error else {
            Issue.record("expected .server, got \(String(describing: error))")
            return
        }
        #expect(status == 404)
        #expect(errcode == "M_NOT_FOUND")
        #expect(message == "Event not found.")
        #expect(error?.errcode == "M_NOT_FOUND")
    }

    @Test func aStubWhoseScriptRanOutAnswers500() async throws {
        let stub = try StubHomeserver([])
        defer { stub.stop() }
        let client = try client(for: stub)
        let error = await #expect(throws: MatrixError.self) { try await client.get(["joined_rooms"]) as JoinedRooms }
        guard case .server(let status, let errcode, _)? = error else {
            Issue.record("expected .server, got \(String(describing: error))")
            return
        }
        #expect(status == 500)
        #expect(errcode == "M_UNKNOWN")
    }

    @Test func aStoppedStubRefusesConnections() async throws {
        let stub = try StubHomeserver([Self.joined])
        stub.stop()
        stub.stop()  // a second stop does nothing
        let client = try client(for: stub)
        let error = await #expect(throws: MatrixError.self) { try await client.get(["joined_rooms"]) as JoinedRooms }
        guard case .unreachable? = error else {
            Issue.record("expected .unreachable, got \(String(describing: error))")
            return
        }
        #expect(stub.requests.isEmpty)
    }

    @Test(arguments: [#"{"rooms":[]}"#, "<html>It works!</html>"])
    func anAnswerThatIsNotTheExpectedJSONIsAnInvalidResponse(body: String) async throws {
        let stub = try StubHomeserver([.init(200, body)])
        defer { stub.stop() }
        let client = try client(for: stub)
        let error = await #expect(throws: MatrixError.self) {
            try await client.get(["joined_rooms"], query: [("access_token", "secret")]) as JoinedRooms
        }
        guard case .invalidResponse(let url, _)? = error else {
            Issue.record("expected .invalidResponse, got \(String(describing: error))")
            return
        }
        #expect(url == stub.url.absoluteString + "/_matrix/client/v3/joined_rooms")
        #expect(error?.description.contains("secret") == false)
    }

    @Test func aRefusedConnectionIsUnreachableAndItsMessageLeavesOutTheQuery() async throws {
        let port = try StubHomeserver.unusedPort()
        var client = try MatrixClient(homeserver: try #require(URL(string: "http://127.0.0.1:\(port)")), accessToken: "token")
        client.requestTimeout = 5
        let error = await #expect(throws: MatrixError.self) {
            try await client.get(["sync"], query: [("filter", "secret")]) as Empty
        }
        guard let error, case .unreachable(let url, _) = error else {
            Issue.record("expected .unreachable, got \(String(describing: error))")
            return
        }
        #expect(url == "http://127.0.0.1:\(port)/_matrix/client/v3/sync")
        #expect(error.description.contains("/_matrix/client/v3/sync"))
        #expect(!error.description.contains("secret"))
    }

    @Test func pathSegmentsAndQueryItemsArePercentEncoded() async throws {
        let stub = try StubHomeserver([.init(200, "{}"), .init(200, "{}")])
        defer { stub.stop() }
        let client = try client(for: stub)
        let _: Empty = try await client.get(["rooms", "!abc:example.org", "event", "$ev/1"])
        let _: Empty = try await client.get(["rooms", "!abc:example.org", "messages"], query: [("from", "s1 2&x=y"), ("dir", "b")])
        #expect(stub.requests == [
            "GET /_matrix/client/v3/rooms/%21abc%3Aexample.org/event/%24ev%2F1",
            "GET /_matrix/client/v3/rooms/%21abc%3Aexample.org/messages?from=s1%202%26x%3Dy&dir=b",
        ])
    }

    @Test func theAccessTokenIsSentAsABearerTokenAndOnlyWhenThereIsOne() async throws {
        let stub = try StubHomeserver([Self.joined, Self.joined])
        defer { stub.stop() }
        let _: JoinedRooms = try await client(for: stub, token: "syt_mina_abc").get(["joined_rooms"])
        let _: JoinedRooms = try await client(for: stub, token: nil).get(["joined_rooms"])
        let received = stub.receivedRequests
        try #require(received.count == 2)
        #expect(received[0].headers["authorization"] == "Bearer syt_mina_abc")
        #expect(received[1].headers["authorization"] == nil)
    }

    @Test func aPostSendsItsBodyAsJSON() async throws {
        let stub = try StubHomeserver([.init(200, "{}")])
        defer { stub.stop() }
        let _: Empty = try await client(for: stub).post(["rooms", "!a:example.org", "leave"], body: ["reason": "bye"])
        let request = try #require(stub.receivedRequests.first)
        #expect(stub.requests == ["POST /_matrix/client/v3/rooms/%21a%3Aexample.org/leave"])
        #expect(request.headers["content-type"] == "application/json")
        #expect(try JSONDecoder().decode([String: String].self, from: request.body) == ["reason": "bye"])
    }

    @Test(arguments: ["ftp://x", "file:///tmp/homeserver"])
    func aHomeserverURLThatIsNotHTTPIsAnInvalidArgument(url: String) throws {
        let homeserver = try #require(URL(string: url))
        let error = #expect(throws: MatrixError.self) { try MatrixClient(homeserver: homeserver, accessToken: nil) }
        guard case .invalidArgument? = error else {
            Issue.record("expected .invalidArgument, got \(String(describing: error))")
            return
        }
    }
}
