import FlatCache
import FlatCacheMatrix
import Foundation
import Testing

/// ``MatrixSource/send(_:requestID:)`` against ``StubHomeserver``: the
/// request it makes, the server's copy it returns, and how failures map onto
/// ``SendFailure``. No homeserver needed: these always run.
@Suite struct MatrixSendTests {
    static let room = "!room:example.org"
    static let mina = "@mina:example.org"
    static let queued = MatrixMessage(
        eventID: "", roomID: room, sender: mina, createdAt: 1_700_000_000_000, msgtype: "m.text", body: "Hello ✓")

    /// A source for `stub`, with the client's default deadline (30 s): under ThreadSanitizer
    /// beside the whole suite a request to the stub has taken over 5 s.
    private func source(for stub: StubHomeserver) throws -> MatrixSource {
        MatrixSource(client: try MatrixClient(homeserver: stub.url, accessToken: "token"))
    }

    private static let sentEvent = StubHomeserver.Response(
        200, #"{"event_id":"$sent1","type":"m.room.message","sender":"@mina:example.org","origin_server_ts":1700000001234,"#
            + #""room_id":"!room:example.org","content":{"msgtype":"m.text","body":"Hello ✓"},"unsigned":{"transaction_id":"req/1 2"}}"#)

    @Test func aSendPutsTheBodyWithTheRequestIDAsTheTransactionIDAndReturnsTheServersCopy() async throws {
        // Given a server that accepts the send and then gives the event back
        let stub = try StubHomeserver([.init(200, #"{"event_id":"$sent1"}"#), Self.sentEvent])
        defer { stub.stop() }

        // When a message is sent with a request id that needs percent-encoding
        let copy = try await source(for: stub).send(Self.queued, requestID: "req/1 2")

        // Then the PUT names the transaction id as one path segment, and the copy is the server's
        #expect(stub.requests == [
            "PUT /_matrix/client/v3/rooms/%21room%3Aexample.org/send/m.room.message/req%2F1%202",
            "GET /_matrix/client/v3/rooms/%21room%3Aexample.org/event/%24sent1",
        ])
        let put = try #require(stub.receivedRequests.first)
        #expect(put.headers["content-type"] == "application/json")
        #expect(try JSONDecoder().decode([String: String].self, from: put.body) == ["msgtype": "m.text", "body": "Hello ✓"])
        #expect(copy == MatrixMessage(
            eventID: "$sent1", roomID: Self.room, sender: Self.mina, createdAt: 1_700_000_001_234, msgtype: "m.text",
            body: "Hello ✓", requestID: "req/1 2"))
        #expect(copy.isSent)
    }

    @Test func anEmptyMsgtypeIsSentAsText() async throws {
        let stub = try StubHomeserver([.init(200, #"{"event_id":"$sent1"}"#), Self.sentEvent])
        defer { stub.stop() }
        var message = Self.queued
        message.msgtype = ""
        _ = try await source(for: stub).send(message, requestID: "r1")
        let put = try #require(stub.receivedRequests.first)
        #expect(try JSONDecoder().decode([String: String].self, from: put.body)["msgtype"] == "m.text")
    }

    @Test func anEventThatCannotBeReadBackGivesTheQueuedMessageWithTheServersID() async throws {
        // Sent, then redacted before it was read back: the send did happen, it must not fail.
        let stub = try StubHomeserver([
            .init(200, #"{"event_id":"$sent1"}"#), .init(404, #"{"errcode":"M_NOT_FOUND","error":"Event not found."}"#),
        ])
        defer { stub.stop() }
        let copy = try await source(for: stub).send(Self.queued, requestID: "r1")
        #expect(copy.eventID == "$sent1")
        #expect(copy.requestID == "r1")
        #expect(copy.body == Self.queued.body)
    }

    @Test func aLostConnectionWhileReadingBackIsOfflineSoTheSendIsRetriedWithTheSameTransactionID() async throws {
        // The stub answers the PUT, then stops: reading the event back cannot connect.
        let stub = try StubHomeserver([.init(200, #"{"event_id":"$sent1"}"#)])
        let source = try source(for: stub)
        let task = Task { try await source.send(Self.queued, requestID: "r1") }
        for _ in 0..<100 where stub.requests.isEmpty { try await Task.sleep(for: .milliseconds(10)) }
        stub.stop()
        let result = await task.result
        // Either the GET reached the stub before it stopped (its script ran out: 500) or not at all.
        switch result {
        case .failure(let failure as SendFailure):
            switch failure {
            case .offline, .temporary: break
            default: Issue.record("expected offline or temporary, got \(failure)")
            }
        default: Issue.record("expected offline or temporary, got \(result)")
        }
    }

    /// One failure as the server says it, and what it must mean to the outbox.
    struct Case: Sendable, CustomTestStringConvertible {
        var response: StubHomeserver.Response
        var expected: SendFailure
        var testDescription: String { "\(response.status) → \(expected)" }
    }

    static let cases: [Case] = [
        Case(response: .init(429, #"{"errcode":"M_LIMIT_EXCEEDED","error":"Too many requests","retry_after_ms":2500}"#),
             expected: .rateLimited(retryAfter: .milliseconds(2_500))),
        Case(response: .init(400, #"{"errcode":"M_LIMIT_EXCEEDED","error":"Too many requests"}"#),
             expected: .rateLimited(retryAfter: .seconds(1))),
        Case(response: .init(500, #"{"errcode":"M_UNKNOWN","error":"Internal server error"}"#),
             expected: .temporary("the homeserver answered 500 M_UNKNOWN: Internal server error")),
        Case(response: .init(502, "<html>Bad gateway</html>"),
             expected: .temporary("the homeserver answered 502 HTTP 502: <html>Bad gateway</html>")),
        Case(response: .init(403, #"{"errcode":"M_FORBIDDEN","error":"You are not in this room."}"#),
             expected: .refused("the homeserver answered 403 M_FORBIDDEN: You are not in this room.")),
        Case(response: .init(413, #"{"errcode":"M_TOO_LARGE","error":"Event too large"}"#),
             expected: .refused("the homeserver answered 413 M_TOO_LARGE: Event too large")),
        Case(response: .init(400, #"{"errcode":"M_UNKNOWN","error":"Bad content"}"#),
             expected: .refused("the homeserver answered 400 M_UNKNOWN: Bad content")),
        Case(response: .init(401, #"{"errcode":"M_UNKNOWN_TOKEN","error":"Soft logged out","soft_logout":true}"#),
             expected: .offline(MatrixError.unknownToken(softLogout: true).description)),
        Case(response: .init(401, #"{"errcode":"M_UNKNOWN_TOKEN","error":"Invalid access token passed."}"#),
             expected: .refused(MatrixError.unknownToken(softLogout: false).description)),
    ]

    @Test(arguments: cases)
    func aFailedSendSaysWhetherRetryingCanHelp(_ failure: Case) async throws {
        // A second answer that would succeed: the send must not be retried by the client.
        let stub = try StubHomeserver([failure.response, .init(200, #"{"event_id":"$late"}"#)])
        defer { stub.stop() }
        let error = await #expect(throws: SendFailure.self) { try await source(for: stub).send(Self.queued, requestID: "r1") }
        #expect(error == failure.expected)
        #expect(stub.requests.count == 1)
    }

    @Test func anAnswerWithoutAnEventIDIsTemporary() async throws {
        // The server may have made the event: a retry with the same transaction id finds it.
        let stub = try StubHomeserver([.init(200, #"{"no_event_id":true}"#)])
        defer { stub.stop() }
        let error = await #expect(throws: SendFailure.self) { try await source(for: stub).send(Self.queued, requestID: "r1") }
        guard case .temporary? = error else {
            Issue.record("expected temporary, got \(String(describing: error))")
            return
        }
    }

    @Test func anUnreachableServerIsOffline() async throws {
        let port = try StubHomeserver.unusedPort()
        var client = try MatrixClient(homeserver: try #require(URL(string: "http://127.0.0.1:\(port)")), accessToken: "token")
        client.requestTimeout = 5
        let error = await #expect(throws: SendFailure.self) {
            try await MatrixSource(client: client).send(Self.queued, requestID: "r1")
        }
        guard case .offline(let reason)? = error else {
            Issue.record("expected offline, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("could not reach"))
    }

    @Test func aMessageWithoutARoomOrARequestIDIsRefusedWithoutARequest() async throws {
        let stub = try StubHomeserver([])
        defer { stub.stop() }
        var roomless = Self.queued
        roomless.roomID = ""
        for (message, requestID) in [(roomless, "r1"), (Self.queued, "")] {
            let error = await #expect(throws: SendFailure.self) { try await source(for: stub).send(message, requestID: requestID) }
            guard case .refused? = error else { Issue.record("expected refused, got \(String(describing: error))"); continue }
        }
        #expect(stub.requests.isEmpty)
    }
}
