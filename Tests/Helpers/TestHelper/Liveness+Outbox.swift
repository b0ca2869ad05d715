import FlatCache
import FlatCacheTesting
import Foundation

/// `liveness <folder> outbox ...`: the outbox and its delivery. Each round
/// cancels, at random moments, loops over `Outbox.events()` and every
/// `async` call (`send`, `entries`, `retry`, `cancel`; the delivery's
/// `start`, `resume`, `waitUntilSent`, and `stop` every 10 rounds) while
/// messages are queued, delivered and received live; then the outbox and the
/// delivery must still answer. Two checks of their own each round:
///
/// - `waitUntilSent()` cancelled while entries are pending (its server is
///   offline) throws `CancellationError`, as documented; a normal return
///   would tell the caller everything was sent.
/// - `retry` of an entry waiting out a 40 s backoff (its first send failed)
///   has it sent within 2 s: "a pending entry is tried at once".
actor LivenessOutbox: LivenessFamily {
    private let world: LivenessWorld
    private let stopwatch: LivenessStopwatch
    private var delivery: OutboxDelivery<SimulatedChatServer>
    /// An outbox whose server is offline: its entries stay pending.
    private let stalled: (cache: LivenessCache, delivery: OutboxDelivery<SimulatedChatServer>)
    /// An outbox whose delivery backs off 40 s after a failure.
    private let slow: (cache: LivenessCache, server: SimulatedChatServer, delivery: OutboxDelivery<SimulatedChatServer>)
    /// How long a retried entry may take to be sent.
    static let retryBound = Duration.seconds(2)

    init(folder: URL, seed: UInt64, stopwatch: LivenessStopwatch) async throws {
        world = try await LivenessWorld(
            folder: folder.appendingPathComponent("main"), seed: seed, writers: LivenessWorld.Writer.allCases,
            delivering: false)
        self.stopwatch = stopwatch
        delivery = OutboxDelivery(
            outbox: world.cache.outbox, sender: world.server, store: world.cache.messages, retry: LivenessWorld.shortBackoff)
        await delivery.start()

        let stalledCache = try LivenessCache(directory: folder.appendingPathComponent("stalled"))
        let offline = SimulatedChatServer()
        await offline.setOffline(true)
        stalled = (
            stalledCache,
            OutboxDelivery(
                outbox: stalledCache.outbox, sender: offline,
                retry: SendRetryPolicy(initialDelay: .milliseconds(5), maximumDelay: .milliseconds(20)))
        )
        try await stalledCache.outbox.send(
            ChatMessage(messageID: 0, channelURL: "stalled", createdAt: 1_000, text: "never sent"), requestID: "stalled")
        await stalled.delivery.start()

        let slowCache = try LivenessCache(directory: folder.appendingPathComponent("slow"))
        let slowServer = SimulatedChatServer()
        slow = (
            slowCache, slowServer,
            OutboxDelivery(
                outbox: slowCache.outbox, sender: slowServer,
                retry: SendRetryPolicy(initialDelay: .seconds(40), maximumDelay: .seconds(40)))
        )
        await slow.delivery.start()
    }

    func round(_ number: Int, random: inout XorShift) async throws {
        await world.setLatency(&random)
        if random.next(4) == 0 { await world.server.failNextCalls(1 + random.next(2)) }
        let outbox = world.cache.outbox
        let current = delivery
        let waiting = (try? await stopwatch.answer("Outbox.entries") { try await outbox.entries() }) ?? []
        let someID = waiting.isEmpty ? "none" : waiting[random.next(waiting.count)].requestID
        let otherID = waiting.isEmpty ? "none" : waiting[random.next(waiting.count)].requestID
        let message = ChatMessage(
            messageID: 0, channelURL: LivenessWorld.channelURLs[random.next(3)], createdAt: 5_000, text: "round \(number)")

        var storm = LivenessStorm()
        storm.listen("Outbox.events", count: 2 + random.next(3), &random) { outbox.events() }
        for _ in 0..<2 { storm.churn("Outbox.events (churned)", times: 30, &random) { outbox.events() } }
        storm.add("Outbox.send", &random) { try await outbox.send(message, requestID: "round-\(number)") }
        storm.add("Outbox.entries", &random) { _ = try await outbox.entries() }
        storm.add("Outbox.entries(in:)", &random) { _ = try await outbox.entries(in: message.channelURL) }
        storm.add("Outbox.retry", &random) { try await outbox.retry(someID) }
        if random.next(4) == 0 { storm.add("Outbox.cancel", &random) { try await outbox.cancel(otherID) } }
        storm.add("OutboxDelivery.waitUntilSent", &random) { try await current.waitUntilSent() }
        storm.add("OutboxDelivery.resume", &random) { await current.resume() }
        storm.add("OutboxDelivery.start (again)", &random) { await current.start() }
        let stopping = number > 0 && number % 10 == 0
        if stopping { storm.add("OutboxDelivery.stop", &random) { await current.stop() } }
        await storm.run(stopwatch)

        // Everything still answers.
        _ = try? await stopwatch.answer("Outbox.entries (after the storm)") { try await outbox.entries() }
        _ = await stopwatch.answer("OutboxDelivery.lastError") { await current.lastError }
        if stopping {
            await stopwatch.answer("OutboxDelivery.stop (after the storm)") { await current.stop() }
            delivery = OutboxDelivery(
                outbox: outbox, sender: world.server, store: world.cache.messages, retry: LivenessWorld.shortBackoff)
            let next = delivery
            await stopwatch.answer("OutboxDelivery.start") { await next.start() }
        }
        if !Liveness.skips("waitUntilSent") { await checkWaitUntilSentThrows(&random) }
        if !Liveness.skips("retry") { try await checkRetryIsTriedAtOnce(number, &random) }
    }

    /// `waitUntilSent()` cancelled while an entry is pending must throw `CancellationError`.
    private func checkWaitUntilSentThrows(_ random: inout XorShift) async {
        let delivery = stalled.delivery
        let (result, _) = await stopwatch.cancel("OutboxDelivery.waitUntilSent (entries pending)", after: Liveness.moment(&random)) {
            try await delivery.waitUntilSent()
        }
        switch result {
        case .failure(let error) where error is CancellationError: return
        case .failure(let error): Liveness.violation("OutboxDelivery.waitUntilSent() cancelled threw \(error), not CancellationError")
        case .success:
            let pending = (try? await stalled.cache.outbox.entries().count(where: { !$0.isFailed })) ?? -1
            Liveness.violation(
                "OutboxDelivery.waitUntilSent() returned normally after its task was cancelled, with \(pending) entries pending")
        }
    }

    /// An entry whose first send failed waits out a 40 s backoff; `retry` must have it sent within ``retryBound``.
    private func checkRetryIsTriedAtOnce(_ number: Int, _ random: inout XorShift) async throws {
        let outbox = slow.cache.outbox
        let requestID = "retried-\(number)"
        let failures = outbox.events()
        let confirmations = outbox.events()
        await slow.server.failNextCalls(1)
        try await outbox.send(
            ChatMessage(messageID: 0, channelURL: "slow-\(number % 3)", createdAt: 1_000, text: requestID), requestID: requestID)
        // Retried as soon as its failure is recorded, or a little later: the delivery is going into its backoff.
        await stopwatch.answer("Outbox.events (the send's failure)") {
            for await event in failures {
                if case .changed(let entry) = event, entry.requestID == requestID, entry.lastFailure != nil { break }
            }
        }
        let pause = random.next(3)
        if pause == 1 { await Task.yield() } else if pause == 2 { try? await Task.sleep(for: .microseconds(random.next(2_000))) }
        try await stopwatch.answer("Outbox.retry") { try await outbox.retry(requestID) }
        let sent = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await event in confirmations {
                    if case .confirmed(let entry, _) = event, entry.requestID == requestID { return true }
                }
                return false
            }
            group.addTask {
                try? await Task.sleep(for: Self.retryBound)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        guard sent else {
            Liveness.violation("Outbox.retry of an entry waiting out its 40 s backoff: not sent within 2 s (round \(number))")
        }
    }

    func finish() async throws {
        let current = delivery
        await stopwatch.answer("OutboxDelivery.stop") { await current.stop() }
        await stopwatch.answer("OutboxDelivery.stop (stalled)") { await self.stalled.delivery.stop() }
        await stopwatch.answer("OutboxDelivery.stop (slow)") { await self.slow.delivery.stop() }
        await world.stop(stopwatch)
    }
}
