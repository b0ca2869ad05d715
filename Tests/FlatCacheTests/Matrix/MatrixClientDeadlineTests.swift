import FlatCacheMatrix
import Foundation
import Testing

/// Every request of ``MatrixClient`` ends: at its deadline however the server
/// answers (URLSession's own timeout on Linux is only an idle timeout), and
/// at once when its task is cancelled.
@Suite(.timeLimit(.minutes(3))) struct MatrixClientDeadlineTests {
    struct Empty: Decodable {}

    @Test func aServerThatTricklesIsCutOffAtTheDeadline() async throws {
        // 240 bytes, one every 0.5 s: 120 s of answer, never 1 s without a byte.
        let body = #"{"joined_rooms":[]}"# + String(repeating: " ", count: 221)
        let stub = try StubHomeserver([.init(200, body, trickle: 0.5)])
        defer { stub.stop() }
        var client = try MatrixClient(homeserver: stub.url, accessToken: "token")
        client.requestTimeout = 1

        let started = ContinuousClock.now
        await #expect(throws: MatrixError.self) { let _: Empty = try await client.get(["joined_rooms"]) }
        let took = ContinuousClock.now - started
        // Far below the answer's 120 s (beside the whole suite: 5.7 s, and 16.2 s under ThreadSanitizer).
        #expect(took < .seconds(60), "the request took \(took), past its 1 s deadline")
    }

    @Test func aCancelledRequestEndsAtOnceAsUnreachable() async throws {
        // Held 120 s: under ThreadSanitizer beside the whole suite the test took more than the
        // default 5 s from seeing the request to cancelling it, and the answer came first.
        let gate = StubHomeserver.Gate(longest: 120)
        let stub = try StubHomeserver([.init(200, "{}", gate: gate)])
        defer {
            gate.open()
            stub.stop()
        }
        let client = try MatrixClient(homeserver: stub.url, accessToken: "token")
        let request = Task { () -> MatrixError? in
            do throws(MatrixError) {
                let _: Empty = try await client.get(["sync"])
                return nil
            } catch {
                return error
            }
        }
        let deadline = ContinuousClock.now + .seconds(60)
        while stub.requests.isEmpty, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(stub.requests.count == 1)

        let cancelled = ContinuousClock.now
        request.cancel()
        let error = await request.value
        // The server never answers before the test ends: any end is the cancel's (a loaded machine took 2.3 s).
        #expect(ContinuousClock.now - cancelled < .seconds(60), "the cancelled request did not end")
        guard case .unreachable(_, let reason)? = error else {
            Issue.record("expected unreachable, got \(String(describing: error))")
            return
        }
        #expect(reason == "cancelled")
    }
}
