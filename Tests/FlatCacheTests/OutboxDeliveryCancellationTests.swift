import Foundation
import Testing

@testable import FlatCache
import FlatCacheTesting

/// Issue 31, findings 2 and 3: a cancelled `waitUntilSent()` throws instead of
/// saying "sent", and a retry cuts a backoff short however it meets the send loop.
@Suite struct OutboxDeliveryCancellationTests {
    typealias Cache = ChatCache<ChatMessage, ChatChannel, ChatUser>

    let folder = try! TemporaryFolder()
    let server = SimulatedChatServer()
    /// A backoff no test waits out: a send tried again within a minute was retried, not timed out
    /// (the whole suite beside other builds made one round of fsyncs take over 10 s).
    static let long = SendRetryPolicy(initialDelay: .seconds(600), maximumDelay: .seconds(600))

    func open() throws -> Cache {
        try Cache(directory: folder.url, configuration: Configuration(writeDelay: .zero, sizeLimit: nil))
    }

    static func typed(_ text: String) -> ChatMessage {
        ChatMessage(messageID: 0, channelURL: "trip", createdAt: 1_000, text: text)
    }

    func sends() async -> Int {
        await server.calls.count { if case .send = $0 { true } else { false } }
    }

    /// Polls `condition` every millisecond for at most `seconds`.
    func eventually(within seconds: Double, _ condition: () async throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(5))
        }
        return try await condition()
    }

    /// Without the fix (the loop returned when its event stream ended) this returned normally
    /// in every round: a caller read that as "everything was sent".
    @Test func aCancelledWaitForSendsThrowsCancellationErrorWhileEntriesArePending() async throws {
        let cache = try open()
        await server.setOffline(true)
        let delivery = OutboxDelivery(outbox: cache.outbox, sender: server, store: cache.messages, retry: Self.long)
        await delivery.start()
        try await cache.outbox.send(Self.typed("typed offline"), requestID: "r1")
        for round in 0..<8 {
            let waiting = Task { try await delivery.waitUntilSent() }
            // Cancelled at different moments: before it looked, while it waits for an event.
            try await Task.sleep(for: .milliseconds(round * 3))
            waiting.cancel()
            let outcome = await waiting.result
            #expect(throws: CancellationError.self, "round \(round)") { try outcome.get() }
        }
        #expect(try await cache.outbox.entries().count == 1)
        await delivery.stop()
    }

    /// The retry's event can reach the delivery after the failed send was recorded but
    /// before its backoff began (under load, about one round in 90): without the fix the
    /// entry then waited out its whole backoff. The hook makes that moment wide, every round.
    @Test func aRetryBetweenAFailedSendAndItsBackoffIsTriedAtOnce() async throws {
        let cache = try open()
        let delivery = OutboxDelivery(outbox: cache.outbox, sender: server, store: cache.messages, retry: Self.long)
        let outbox = cache.outbox
        let server = server
        await delivery.setBeforeBackoff {
            // The user taps "retry" now; its event reaches the delivery before the backoff begins.
            await server.setOffline(false)
            for entry in (try? await outbox.entries()) ?? [] { try? await outbox.retry(entry.requestID) }
            try? await Task.sleep(for: .milliseconds(50))
        }
        await delivery.start()
        for round in 0..<3 {
            await server.setOffline(true)
            let requestID = "r\(round)"
            try await cache.outbox.send(Self.typed("round \(round)"), requestID: requestID)
            let sent = try await eventually(within: 60) { try await cache.outbox.entries().isEmpty }
            #expect(sent, "round \(round): a retried entry waited out its backoff")
            if !sent { break }
        }
        #expect(await server.messages(in: "trip").count == 3)
        await delivery.stop()
    }
}
