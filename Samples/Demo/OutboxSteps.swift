import FlatCache
import FlatCacheTesting
import Foundation

/// The steps of `flatcache-demo outbox` after the app's kill, in order: each
/// prints a heading, what it does, the outbox's events (see ``Transcript``),
/// and what it checked on the server, the cache and the outbox.
struct OutboxSteps {
    /// The cache the story's app keeps.
    typealias Cache = ChatCache<ChatMessage, ChatChannel, ChatUser>

    /// The cache the restarted app opened.
    let cache: Cache
    /// Its folder.
    let folder: URL
    /// The chat server, scripted step by step.
    let server: SimulatedChatServer
    /// The send loop, delivering the outbox to the server.
    let delivery: OutboxDelivery<SimulatedChatServer>
    /// The outbox's events, printed step by step.
    let transcript = Transcript()

    /// Retries come after 50 ms, so that the story runs in a moment.
    static let retry = SendRetryPolicy(initialDelay: .milliseconds(50), maximumDelay: .milliseconds(50))

    /// Empties `folder`'s cache (`removeAll()` takes the outbox too): every run starts the same.
    static func empty(_ folder: URL) async throws {
        let cache = try Cache(directory: folder)
        try await cache.removeAll()
        try check(try await cache.outbox.entries().isEmpty, "removeAll() left entries in the outbox")
        try await cache.close()
    }

    /// Step 2: a new cache on the same folder finds the three messages, pending, in the order typed.
    static func restart(on folder: URL, server: SimulatedChatServer) async throws -> OutboxSteps {
        StoryLines.heading(2, "Restarted: a new ChatCache on the same folder")
        let cache = try Cache(directory: folder)
        let delivery = OutboxDelivery(outbox: cache.outbox, sender: server, store: cache.messages, retry: retry)
        let steps = OutboxSteps(cache: cache, folder: folder, server: server, delivery: delivery)
        steps.transcript.follow(cache.outbox.events(), from: .outbox, describe: StoryLines.describe)
        StoryLines.say("call", "ChatCache(directory:), then outbox.entries()")
        let entries = try await cache.outbox.entries()
        let typed = OutboxSeed.typedOffline
        let pending = entries.allSatisfy { if case .pending = $0.state { true } else { false } }  // the app sent none
        try check(
            entries.map(\.requestID) == typed.map(\.requestID) && entries.map(\.message) == typed.map(\.message) && pending,
            "the outbox holds \(entries.map(StoryLines.entry)), not the three typed, pending, in order")
        StoryLines.say("outbox", "\(entries.count) \(entries.count == 1 ? "entry" : "entries"), in the order typed:")
        for entry in entries { StoryLines.say("", StoryLines.entry(entry)) }
        let bad = try await cache.verify().filter { !$0.isValid }
        try check(bad.isEmpty, "verify() found bad files: \(bad.map(\.path))")
        StoryLines.say("verify", "every file matches its sidecar")
        return steps
    }

    /// Step 3: online, the send loop delivers the three in order.
    func online() async throws {
        StoryLines.heading(3, "Online: the send loop delivers them in order")
        await server.setOffline(false)
        StoryLines.say("server", "online")
        StoryLines.say("call", "OutboxDelivery(outbox:sender:store:retry:).start(), then waitUntilSent()")
        await delivery.start()
        try await transcript.expect(
            .outbox, "sending ana-1", "confirmed ana-1", "sending ana-2", "confirmed ana-2", "sending ana-3", "confirmed ana-3")
        try await delivery.waitUntilSent()
        let served = await server.messages(in: StorySeed.general)
        try check(
            served.map(\.requestID) == OutboxSeed.typedOffline.map(\.requestID)
                && served.map(\.text) == OutboxSeed.typedOffline.map(\.message.text),
            "the server holds \(served.map(StoryLines.served)), not the three typed, in order")
        StoryLines.say("server", "General holds \(StoryLines.list(served.map(StoryLines.served))), in the order typed")
        try await checkCacheAndOutbox()
    }

    /// Step 4: the server accepts a message and its answer is lost; the retry makes no second message.
    func answerLost() async throws {
        StoryLines.heading(4, "An answer lost: retried with the same request id")
        await server.dropNextAnswers(1)
        StoryLines.say("server", "will accept the next message, then drop its answer (the connection fails)")
        let (requestID, message) = OutboxSeed.answerLost
        StoryLines.say("call", "outbox.send(\(StoryLines.quoted(message)), requestID: \"\(requestID)\")")
        _ = try await cache.outbox.send(message, requestID: requestID)
        try await transcript.expect(
            .outbox, "queued \(requestID)", "sending \(requestID)", "pending \(requestID)", "sending \(requestID)",
            "confirmed \(requestID)")
        try await delivery.waitUntilSent()
        let copies = await served(requestID)
        try check(copies.count == 1, "the server holds \(requestID) \(copies.count) times: \(copies.map(StoryLines.served))")
        let total = await generalCount()
        StoryLines.say("server", "holds \(requestID) once: \(StoryLines.served(copies[0])) (\(total) messages in General)")
        try await checkCacheAndOutbox()
    }

    /// Step 5: the server refuses a message for good; it is shown failed, the next one is sent.
    func refused() async throws {
        StoryLines.heading(5, "Refused for good: shown failed, the next message goes on")
        await server.refuseNextSends(1, reason: OutboxSeed.refusal)
        StoryLines.say("server", "will refuse the next message: \(OutboxSeed.refusal)")
        for (requestID, message) in [OutboxSeed.refused, OutboxSeed.afterRefused] {
            StoryLines.say("call", "outbox.send(\(StoryLines.quoted(message)), requestID: \"\(requestID)\")")
            _ = try await cache.outbox.send(message, requestID: requestID)
        }
        let (refused, after) = (OutboxSeed.refused.requestID, OutboxSeed.afterRefused.requestID)
        // The loop may start on the first before the second is queued: checked below, printed in this order.
        try await transcript.expect(
            .outbox, "queued \(refused)", "queued \(after)", "sending \(refused)", "failed \(refused)",
            "sending \(after)", "confirmed \(after)", inAnyOrder: true)
        let names = await transcript.entries.map(\.name)
        try check(
            (names.firstIndex(of: "failed \(refused)") ?? .max) < (names.firstIndex(of: "sending \(after)") ?? -1),
            "\(after) was sent before \(refused) had failed")
        StoryLines.say("check", "\(after) was sent only after \(refused) had failed: one at a time, in order")
        try await delivery.waitUntilSent()
        let entries = try await cache.outbox.entries()
        try check(
            entries.map(\.requestID) == [refused] && entries[0].isFailed,
            "the outbox holds \(entries.map(StoryLines.entry)), not \(refused) failed")
        StoryLines.say("outbox", StoryLines.entry(entries[0]))
        let (refusedCopies, afterCopies) = (await served(refused), await served(after))
        try check(
            refusedCopies.isEmpty && afterCopies.count == 1,
            "the server holds \(refused) \(refusedCopies.count) times and \(after) \(afterCopies.count) times, not 0 and 1")
        let total = await generalCount()
        StoryLines.say("server", "has no \(refused), holds \(after) once (\(total) messages in General)")
    }

    /// Step 6: the failed message, edited, is retried and sent.
    func editAndRetry() async throws {
        StoryLines.heading(6, "Edited and retried")
        var (requestID, edited) = OutboxSeed.refused
        edited.text = OutboxSeed.editedText
        StoryLines.say("call", "outbox.retry(\"\(requestID)\", with: the message edited to \(StoryLines.quoted(edited)))")
        try await cache.outbox.retry(requestID, with: edited)
        try await transcript.expect(.outbox, "pending \(requestID)", "sending \(requestID)", "confirmed \(requestID)")
        try await delivery.waitUntilSent()
        let copies = await served(requestID)
        try check(
            copies.count == 1 && copies[0].text == OutboxSeed.editedText,
            "the server holds \(copies.map(StoryLines.served)) for \(requestID), not the edited text once")
        StoryLines.say("server", "holds \(requestID) once, edited: \(StoryLines.served(copies[0]))")
        try await checkCacheAndOutbox()
    }

    /// Step 7: another refused message is cancelled: it leaves the outbox, the server never had it.
    func cancel() async throws {
        StoryLines.heading(7, "Refused again, and cancelled")
        await server.refuseNextSends(1, reason: OutboxSeed.refusal)
        StoryLines.say("server", "will refuse the next message: \(OutboxSeed.refusal)")
        let (requestID, message) = OutboxSeed.cancelled
        StoryLines.say("call", "outbox.send(\(StoryLines.quoted(message)), requestID: \"\(requestID)\")")
        _ = try await cache.outbox.send(message, requestID: requestID)
        try await transcript.expect(.outbox, "queued \(requestID)", "sending \(requestID)", "failed \(requestID)")
        StoryLines.say("call", "outbox.cancel(\"\(requestID)\")")
        try await cache.outbox.cancel(requestID)
        try await transcript.expect(.outbox, "cancelled \(requestID)")
        let copies = await served(requestID)
        try check(copies.isEmpty, "the server holds the cancelled \(requestID): \(copies.map(StoryLines.served))")
        StoryLines.say("server", "never had \(requestID)")
        try await checkCacheAndOutbox()
    }

    /// The summary line, once no event is left unexpected; stops the loop and closes the cache.
    func finish() async throws {
        await delivery.stop()
        try await transcript.expectNoMore()
        let served = await server.messages(in: StorySeed.general)
        let ids = served.compactMap(\.requestID)
        try check(ids.count == served.count && Set(ids).count == ids.count, "a request id is on the server twice: \(ids)")
        let outboxFile = folder.appendingPathComponent("outbox.lines")
        try check(!FileManager.default.fileExists(atPath: outboxFile.path), "outbox.lines is still there with no entry left")
        let events = await transcript.entries.count
        try await cache.close()
        print("\nDone · \(events) events; the server holds \(StoryLines.count(served.count, "message")), "
            + "each request id once (\(StoryLines.list(ids))); the outbox is empty and its file gone; cache closed.")
    }

    // MARK: - Checks

    /// The cache holds the server's messages of General, no more; the outbox holds no pending or sending entry.
    private func checkCacheAndOutbox() async throws {
        let served = await server.messages(in: StorySeed.general)
        let cached = try await cache.messages.load(in: StorySeed.general)
        try check(cached == served, "the cache holds \(cached.map(StoryLines.served)), not the server's \(served.map(StoryLines.served))")
        let waiting = try await cache.outbox.entries().filter { !$0.isFailed }
        try check(waiting.isEmpty, "the outbox still holds \(waiting.map(StoryLines.entry))")
        let failed = try await cache.outbox.entries().count
        StoryLines.say(
            "cache", "General holds the server's \(StoryLines.count(cached.count, "message")); the outbox "
                + (failed == 0 ? "is empty" : "holds \(failed) failed"))
    }

    /// The server's messages of General sent with `requestID`.
    private func served(_ requestID: String) async -> [ChatMessage] {
        await server.messages(in: StorySeed.general).filter { $0.requestID == requestID }
    }

    /// How many messages the server holds in General.
    private func generalCount() async -> Int {
        await server.messages(in: StorySeed.general).count
    }

    /// Stops the story with `failure` unless `condition` holds.
    ///
    /// - Throws: ``StoryError/notHeld(_:)``.
    static func check(_ condition: Bool, _ failure: @autoclosure () -> String) throws(StoryError) {
        guard condition else { throw .notHeld(failure()) }
    }

    private func check(_ condition: Bool, _ failure: @autoclosure () -> String) throws(StoryError) {
        try Self.check(condition, failure())
    }
}
