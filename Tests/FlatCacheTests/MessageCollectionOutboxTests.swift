import Foundation
import Testing

@testable import FlatCache
import FlatCacheTesting

/// The outbox in a chat view: pending entries shown after the messages,
/// and a server's copy shown once whether its echo or the send's answer comes first.
@Suite struct MessageCollectionOutboxTests {
    typealias Cache = ChatCache<ChatMessage, ChatChannel, ChatUser>
    typealias Event = MessageCollectionEvent<ChatMessage>

    let folder = try! TemporaryFolder()
    let server = SimulatedChatServer()
    let channel = "trip"
    static let quick = SendRetryPolicy(initialDelay: .milliseconds(5), maximumDelay: .milliseconds(20))

    func open() throws -> Cache {
        try Cache(directory: folder.url, configuration: Configuration(writeDelay: .zero, sizeLimit: nil))
    }

    static func typed(_ text: String) -> ChatMessage {
        ChatMessage(messageID: 0, channelURL: "trip", createdAt: 0, text: text)
    }

    static func history(_ ids: ClosedRange<Int64>) -> [ChatMessage] {
        ids.map { ChatMessage(messageID: $0, channelURL: "trip", createdAt: $0 * 1_000, text: "message \($0)") }
    }

    /// What the view shows and what it lists as pending, rebuilt from the events alone.
    static func replay(_ events: [Event]) -> (messages: [Int64], pending: [String]) {
        var view = [ChatMessage]()
        var pending = [String]()
        for event in events {
            switch event {
            case .cachedPage(let page), .replaced(let page): view = page
            case .added(let added): view = CanonicalOrder.messages(view + added)
            case .prepended(let page): view = page + view
            case .appended(let page): view += page
            case .deleted(let ids): view.removeAll { ids.contains($0.messageID) }
            case .outboxAdded(let entry): pending.append(entry.requestID)
            case .outboxConfirmed(let entry, _), .outboxCancelled(let entry): pending.removeAll { $0 == entry.requestID }
            default: break
            }
        }
        return (view.map(\.messageID), pending)
    }

    func check(_ collection: MessageCollection<ChatMessage>, _ log: EventLog<Event>) async {
        let replayed = Self.replay(log.all)
        #expect(replayed.messages == (await collection.messages).map(\.messageID))
        #expect(replayed.pending == (await collection.pending).map(\.requestID))
    }

    @Test func theEchoBeforeTheSendsAnswerShowsTheMessageOnce() async throws {
        let cache = try open()
        await server.send(Self.history(1...3))
        let collection = try MessageCollection(channelURL: channel, store: cache.messages, source: server, outbox: cache.outbox)
        let log = EventLog(collection.events)
        try await collection.start()
        // The server makes the message and its live echo goes out; the answer waits at the gate.
        let gate = Gate()
        let delivery = OutboxDelivery(
            outbox: cache.outbox, sender: HeldAnswers(server: server, gate: gate), store: cache.messages, retry: Self.quick)
        await delivery.start()
        try await cache.outbox.send(Self.typed("echo first"), requestID: "r1")
        let confirmed = try await log.first { event -> String? in
            if case .outboxConfirmed(let entry, _) = event { entry.requestID } else { nil }
        }
        #expect(confirmed == "r1")
        #expect(await collection.pending.isEmpty)
        await gate.open()
        try await delivery.waitUntilSent()
        await delivery.stop()
        try await Task.sleep(for: .milliseconds(50))  // time for any late event
        let shown = await collection.messages.filter { $0.requestID == "r1" }
        #expect(shown.count == 1)
        #expect(log.all.count { if case .outboxConfirmed = $0 { true } else { false } } == 1)
        #expect(await server.count(of: "r1", in: channel) == 1)
        await check(collection, log)
        await collection.dispose()
    }

    @Test func theSendsAnswerBeforeTheEchoShowsTheMessageOnce() async throws {
        let cache = try open()
        await server.send(Self.history(1...3))
        let source = HeldEchoes(server: server)
        let collection = try MessageCollection(channelURL: channel, store: cache.messages, source: source, outbox: cache.outbox)
        let log = EventLog(collection.events)
        try await collection.start()
        let delivery = OutboxDelivery(outbox: cache.outbox, sender: server, store: cache.messages, retry: Self.quick)
        await delivery.start()
        try await cache.outbox.send(Self.typed("answer first"), requestID: "r1")
        try await delivery.waitUntilSent()
        _ = try await log.first { event -> Bool? in if case .outboxConfirmed = event { true } else { nil } }
        #expect(await collection.messages.count { $0.requestID == "r1" } == 1)
        // Now the echo arrives: it changes nothing shown.
        await source.release()
        try await Task.sleep(for: .milliseconds(50))
        #expect(await collection.messages.count { $0.requestID == "r1" } == 1)
        #expect(await collection.messages.count == 4)
        await check(collection, log)
        await delivery.stop()
        await collection.dispose()
    }

    @Test func pendingEntriesOutliveAHugeGapAndAReload() async throws {
        let cache = try open()
        await server.send(Self.history(1...5))
        do {
            let first = try MessageCollection(channelURL: channel, store: cache.messages, source: server)
            try await first.start()
            await first.dispose()
        }
        // Offline: two messages typed; meanwhile 400 messages reach the server.
        try await cache.outbox.send(Self.typed("one"), requestID: "r1")
        try await cache.outbox.send(Self.typed("two"), requestID: "r2")
        await server.send(Self.history(6...405))
        let collection = try MessageCollection(
            channelURL: channel, store: cache.messages, source: server, hugeGapThreshold: 100, outbox: cache.outbox)
        let log = EventLog(collection.events)
        try await collection.start()
        #expect(log.all.contains { if case .hugeGap = $0 { true } else { false } })
        #expect(await collection.pending.map(\.requestID) == ["r1", "r2"])
        try await cache.messages.setChangeLogToken(nil, in: channel)  // as a token too old: the next sync reloads
        try await collection.sync()
        #expect(await collection.pending.map(\.requestID) == ["r1", "r2"])
        await check(collection, log)
        await collection.dispose()
    }

    @Test func aCopyCachedBeforeItsEntryWasConfirmedConfirmsItAtStart() async throws {
        // A crash between saving the server's copy and confirming its entry.
        let cache = try open()
        try await cache.outbox.send(Self.typed("made, not confirmed"), requestID: "r1")
        try await cache.outbox.send(Self.typed("still waiting"), requestID: "r2")
        let copy = try await server.send(Self.typed("made, not confirmed"), requestID: "r1")
        try await cache.messages.save([copy])
        let collection = try MessageCollection(channelURL: channel, store: cache.messages, source: server, outbox: cache.outbox)
        let log = EventLog(collection.events)
        try await collection.start()
        #expect(await collection.pending.map(\.requestID) == ["r2"])
        #expect(await collection.messages.map(\.requestID) == ["r1"])
        // Confirmed in the outbox too: it will not be sent again.
        for _ in 0..<100 where try await cache.outbox.entries().count != 1 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(try await cache.outbox.entries().map(\.requestID) == ["r2"])
        await check(collection, log)
        await collection.dispose()
    }

    @Test func stateChangesAndCancellationReachTheView() async throws {
        let cache = try open()
        let collection = try MessageCollection(channelURL: channel, store: cache.messages, source: server, outbox: cache.outbox)
        let log = EventLog(collection.events)
        try await collection.start()
        await server.refuseNextSends(1, reason: "not allowed")
        try await cache.outbox.send(Self.typed("refused"), requestID: "r1")
        let delivery = OutboxDelivery(outbox: cache.outbox, sender: server, store: cache.messages, retry: Self.quick)
        await delivery.start()
        try await delivery.waitUntilSent()
        let failed = try await log.first { event -> OutboxEntry<ChatMessage>? in
            if case .outboxChanged(let entry) = event, entry.isFailed { entry } else { nil }
        }
        #expect(failed.requestID == "r1")
        #expect(await collection.pending.first?.isFailed == true)
        try await cache.outbox.cancel("r1")
        _ = try await log.first { event -> Bool? in if case .outboxCancelled = event { true } else { nil } }
        #expect(await collection.pending.isEmpty)
        await check(collection, log)
        await delivery.stop()
        await collection.dispose()
    }
}

/// A sender whose answers wait at a gate after the server acted (its live echo goes out at once).
struct HeldAnswers: MessageSender {
    let server: SimulatedChatServer
    let gate: Gate

    func send(_ message: ChatMessage, requestID: String) async throws -> ChatMessage {
        let copy = try await server.send(message, requestID: requestID)
        await gate.pass()
        return copy
    }
}

/// The simulated server as a source whose live echoes of sent messages (those with a request id) wait for ``release()``.
actor HeldEchoes: MessageSource {
    let server: SimulatedChatServer
    private var held = [LiveEvent<ChatMessage>]()
    private var releasing = false
    private var continuation: AsyncStream<LiveEvent<ChatMessage>>.Continuation?

    init(server: SimulatedChatServer) { self.server = server }

    func release() {
        releasing = true
        for event in held { continuation?.yield(event) }
        held = []
    }

    private func pass(_ event: LiveEvent<ChatMessage>) {
        if case .messageAdded(let message) = event, message.requestID != nil, !releasing {
            held.append(event)
        } else {
            continuation?.yield(event)
        }
    }

    func liveEvents() async -> AsyncStream<LiveEvent<ChatMessage>> {
        let upstream = await server.liveEvents()
        let (stream, continuation) = AsyncStream.makeStream(of: LiveEvent<ChatMessage>.self)
        self.continuation = continuation
        Task { for await event in upstream { self.pass(event) } }
        return stream
    }

    func messages(in channelURL: String, _ direction: PageDirection, _ timestamp: Int64, limit: Int) async throws -> MessagePage<ChatMessage> {
        try await server.messages(in: channelURL, direction, timestamp, limit: limit)
    }

    func changeLogToken(in channelURL: String) async throws -> String {
        try await server.changeLogToken(in: channelURL)
    }

    func changeLog(in channelURL: String, since token: String) async throws -> MessageChangeLog<ChatMessage> {
        try await server.changeLog(in: channelURL, since: token)
    }
}
