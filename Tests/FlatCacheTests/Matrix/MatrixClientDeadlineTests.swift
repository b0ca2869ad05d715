import FlatCacheMatrix
import Foundation
import Testing

/// Every request of ``MatrixClient`` ends: at its deadline however the server
/// answers (URLSession's own timeout on Linux is only an idle timeout), and
/// at once when its task is cancelled.
@Suite(.timeLimit(.minutes(1))) struct MatrixClientDeadlineTests {
    struct Empty: Decodable {}

    @Test func aServerThatTricklesIsCutOffAtTheDeadline() async throws {
        // 120 bytes, one every 0.25 s: 30 s of answer, never 1 s without a byte.
        let body = #"{"joined_rooms":[]}"# + String(repeating: " ", count: 101)
        let stub = try StubHomeserver([.init(200, body, trickle: 0.25)])
        defer { stub.stop() }
        var client = try MatrixClient(homeserver: stub.url, accessToken: "token")
        client.requestTimeout = 1

        let started = ContinuousClock.now
        await #expect(throws: MatrixError.self) { let _: Empty = try await client.get(["joined_rooms"]) }
        let took = ContinuousClock.now - started
        // Far below the answer's 30 s (a loaded machine, the whole suite beside it, took 5.7 s).
        #expect(took < .seconds(15), "the request took \(took), past its 1 s deadline")
    }

    @Test func aCancelledRequestEndsAtOnceAsUnreachable() async throws {
        let gate = StubHomeserver.Gate()
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
        let deadline = ContinuousClock.now + .seconds(10)
        while stub.requests.isEmpty, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(stub.requests.count == 1)

        let cancelled = ContinuousClock.now
        request.cancel()
        let error = await request.value
        // The server never answers before the test ends: any end is the cancel's (a loaded machine took 2.3 s).
        #expect(ContinuousClock.now - cancelled < .seconds(20), "the cancelled request did not end")
        guard case .unreachable(_, let reason)? = error else {
            Issue.record("expected unreachable, got \(String(describing: error))")
            return
        }
        #expect(reason == "cancelled")
    }
}
