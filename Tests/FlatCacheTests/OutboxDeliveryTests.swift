import Foundation
import Testing

@testable import FlatCache
import FlatCacheTesting

/// The send loop against the simulated server and its scripted failures:
/// order, exactly once, failures for good, retries, restarts.
@Suite struct OutboxDeliveryTests {
    typealias Cache = ChatCache<ChatMessage, ChatChannel, ChatUser>

    let folder = try! TemporaryFolder()
    let server = SimulatedChatServer()
    /// Short waits: a test retries in milliseconds, not seconds.
    static let quick = SendRetryPolicy(initialDelay: .milliseconds(5), maximumDelay: .milliseconds(40))

    func open() throws -> Cache {
        try Cache(directory: folder.url, configuration: Configuration(writeDelay: .zero, sizeLimit: nil))
    }

    func delivery(_ cache: Cache) -> OutboxDelivery<SimulatedChatServer> {
        OutboxDelivery(outbox: cache.outbox, sender: server, store: cache.messages, retry: Self.quick)
    }

    static func typed(_ text: String, in channel: String = "trip") -> ChatMessage {
        ChatMessage(messageID: 0, channelURL: channel, createdAt: 1_000, text: text)
    }

    /// Waits until the outbox has nothing left to send, at most 60 seconds
    /// (the whole suite under ThreadSanitizer, beside the crash campaigns'
    /// child processes, once took more than 10 for a send with one retry).
    func waitUntilSent(_ delivery: OutboxDelivery<SimulatedChatServer>) async throws {
        let waiting = Task { try await delivery.waitUntilSent() }
        let timer = Task {
            try await Task.sleep(for: .seconds(60))
            waiting.cancel()
        }
        defer { timer.cancel() }
        try await waiting.value
    }

    @Test func eachChannelsMessagesReachTheServerOnceInTheOrderQueued() async throws {
        let cache = try open()
        for index in 0..<6 {
            try await cache.outbox.send(Self.typed("a\(index)", in: "a"), requestID: "a\(index)")
            try await cache.outbox.send(Self.typed("b\(index)", in: "b"), requestID: "b\(index)")
        }
        let delivery = delivery(cache)
        await delivery.start()
        try await waitUntilSent(delivery)
        await delivery.stop()
        #expect(await server.messages(in: "a").map(\.text) == (0..<6).map { "a\($0)" })
        #expect(await server.messages(in: "b").map(\.text) == (0..<6).map { "b\($0)" })
        #expect(try await cache.outbox.entries().isEmpty)
        // The server's copies are cached, with their ids and request ids.
        let cached = try await cache.messages.load(in: "a")
        #expect(cached.map(\.requestID) == (0..<6).map { "a\($0)" })
        #expect(cached.allSatisfy { $0.isSent })
    }

    @Test func anAnswerLostAfterTheServerActedIsRetriedWithoutADuplicate() async throws {
        let cache = try open()
        await server.dropNextAnswers(1)
        let events = cache.outbox.events()
        try await cache.outbox.send(Self.typed("lost answer"), requestID: "r1")
        let delivery = delivery(cache)
        await delivery.start()
        try await waitUntilSent(delivery)
        await delivery.stop()
        #expect(await server.count(of: "r1", in: "trip") == 1)
        #expect(await server.messages(in: "trip").count == 1)
        let sends = await server.calls.filter { if case .send = $0 { true } else { false } }
        #expect(sends.count == 2, "the lost answer was not retried")
        var confirmations = 0
        for await event in events {
            if case .confirmed = event { confirmations += 1 }
            if case .confirmed = event { break }
        }
        #expect(confirmations == 1)
    }

    @Test func aRefusedMessageFailsAndTheNextOnesAreStillSent() async throws {
        let cache = try open()
        await server.refuseNextSends(1, reason: "too long")
        try await cache.outbox.send(Self.typed("refused"), requestID: "r1")
        try await cache.outbox.send(Self.typed("second"), requestID: "r2")
        try await cache.outbox.send(Self.typed("third"), requestID: "r3")
        let delivery = delivery(cache)
        await delivery.start()
        try await waitUntilSent(delivery)
        #expect(await server.messages(in: "trip").map(\.text) == ["second", "third"])
        let left = try await cache.outbox.entries()
        #expect(left.map(\.requestID) == ["r1"])
        guard case .failed(let reason, let attempts)? = left.first?.state else {
            Issue.record("the refused entry is not failed: \(String(describing: left.first?.state))")
            return
        }
        #expect(reason == "too long" && attempts == 1)
        // The failed state survives a restart.
        let reopened = try open()
        #expect(try await reopened.outbox.entries().first?.isFailed == true)
        // Retried after editing, it is sent; it does not jump the queue's order of what was sent.
        try await cache.outbox.retry("r1", with: Self.typed("refused, shortened"))
        try await waitUntilSent(delivery)
        await delivery.stop()
        #expect(await server.messages(in: "trip").map(\.text) == ["second", "third", "refused, shortened"])
        #expect(await server.count(of: "r1", in: "trip") == 1)
    }

    @Test func aFailedEntryCanBeCancelled() async throws {
        let cache = try open()
        await server.refuseNextSends(1)
        try await cache.outbox.send(Self.typed("refused"), requestID: "r1")
        let delivery = delivery(cache)
        await delivery.start()
        try await waitUntilSent(delivery)
        await delivery.stop()
        try await cache.outbox.cancel("r1")
        #expect(try await cache.outbox.entries().isEmpty)
        #expect(await server.messages(in: "trip").isEmpty)
    }

    @Test func offlineItWaitsAndResumeSendsWhenTheNetworkIsBack() async throws {
        let cache = try open()
        await server.setOffline(true)
        let delivery = OutboxDelivery(
            outbox: cache.outbox, sender: server, store: cache.messages,
            retry: SendRetryPolicy(initialDelay: .seconds(60), maximumDelay: .seconds(60)))
        await delivery.start()
        try await cache.outbox.send(Self.typed("typed offline"), requestID: "r1")
        // The first try fails offline and the entry waits out a minute's backoff, pending.
        for _ in 0..<500 {
            if try await cache.outbox.entries().first?.lastFailure != nil { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        let waiting = try await cache.outbox.entries().first
        #expect(waiting?.lastFailure?.hasPrefix("offline") == true)
        // It waits: no second try before the backoff ends (or resume()).
        try await Task.sleep(for: .milliseconds(200))
        #expect(await server.calls.count { if case .send = $0 { true } else { false } } == 1)
        if case .pending? = waiting?.state {} else { Issue.record("an offline entry is pending, not \(String(describing: waiting?.state))") }
        await server.setOffline(false)
        await delivery.resume()
        try await waitUntilSent(delivery)
        await delivery.stop()
        #expect(await server.count(of: "r1", in: "trip") == 1)
    }

    @Test func aRateLimitWaitsTheTimeAsked() async throws {
        let cache = try open()
        await server.rateLimitNextSends(2, retryAfter: .milliseconds(20))
        try await cache.outbox.send(Self.typed("limited"), requestID: "r1")
        let delivery = delivery(cache)
        await delivery.start()
        try await waitUntilSent(delivery)
        await delivery.stop()
        #expect(await server.count(of: "r1", in: "trip") == 1)
        let sends = await server.calls.filter { if case .send = $0 { true } else { false } }
        #expect(sends.count == 3)
    }

    @Test func anEntryLeftSendingByACrashIsSentAgainUnderItsKeyOnce() async throws {
        // The first process sent it (the server has it) and died before the answer was recorded.
        let cache = try open()
        try await cache.outbox.send(Self.typed("in flight"), requestID: "r1")
        _ = try await cache.outbox.beginSending("r1")
        _ = try await server.send(Self.typed("in flight"), requestID: "r1")
        // The next process finds it sending and sends it again under the same key.
        let restarted = try open()
        guard case .sending? = try await restarted.outbox.entries().first?.state else {
            Issue.record("the entry is not sending after the restart")
            return
        }
        let delivery = delivery(restarted)
        await delivery.start()
        try await waitUntilSent(delivery)
        await delivery.stop()
        #expect(await server.count(of: "r1", in: "trip") == 1)
        #expect(try await restarted.messages.load(in: "trip").count == 1)
    }

    @Test func aMessageQueuedAfterStartIsSentWithoutAWakeUpCall() async throws {
        let cache = try open()
        let delivery = delivery(cache)
        await delivery.start()
        for round in 0..<20 {
            try await cache.outbox.send(Self.typed("m\(round)"), requestID: "r\(round)")
            try await waitUntilSent(delivery)
        }
        await delivery.stop()
        #expect(await server.messages(in: "trip").map(\.text) == (0..<20).map { "m\($0)" })
    }
}
