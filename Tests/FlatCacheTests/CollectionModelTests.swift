import Foundation
import Observation
import Testing

@testable import FlatCache
import FlatCacheTesting

/// The `@Observable` main-actor models a SwiftUI view binds to: they follow
/// their collection (live messages, paging, the outbox), change only on the
/// main actor, and turn failures into `error` and calls into `isLoading`.
@MainActor @Suite struct CollectionModelTests {
    typealias Cache = ChatCache<ChatMessage, ChatChannel, ChatUser>

    let folder = try! TemporaryFolder()
    let server = SimulatedChatServer()
    let channel = "trip"

    func open() throws -> Cache {
        try Cache(directory: folder.url, configuration: Configuration(writeDelay: .zero, sizeLimit: nil))
    }

    static func history(_ ids: ClosedRange<Int64>, in channel: String = "trip") -> [ChatMessage] {
        ids.map { ChatMessage(messageID: $0, channelURL: channel, createdAt: $0 * 1_000, text: "message \($0)") }
    }

    /// Waits (at most 60 s, on the main actor) until `condition` holds: bounded, and
    /// generous for a loaded machine (the whole suite under ThreadSanitizer).
    func eventually(_ what: String, _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("timed out waiting until \(what)")
                return
            }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    @Test func theModelShowsTheCollectionAndFollowsALiveMessageOnTheMainActor() async throws {
        let cache = try open()
        await server.send(Self.history(1...40))
        let collection = try MessageCollection(channelURL: channel, store: cache.messages, source: server, pageSize: 10)
        let model = MessageCollectionModel(collection)
        #expect(model.messages.isEmpty && !model.isLoading)

        await model.start()
        #expect(model.messages.map(\.messageID) == Array(31...40))
        #expect(model.messages.map(\.messageID) == (await collection.messages).map(\.messageID))
        #expect(model.hasPrevious && !model.hasNext && !model.isLoading && model.error == nil)

        // A live message redraws a view that read `messages`, and the change comes on the main actor:
        // on the main queue, its executor (on Linux the test runner drains it off the main thread).
        let key = DispatchSpecificKey<Int>()
        DispatchQueue.main.setSpecific(key: key, value: 1)
        let changed = Flag()
        let onMainQueue = Flag()
        withObservationTracking {
            _ = model.messages
        } onChange: {
            changed.set()
            if DispatchQueue.getSpecific(key: key) == 1 { onMainQueue.set() }
        }
        await server.send(Self.history(41...41))
        try await eventually("the live message is shown") { model.messages.last?.messageID == 41 }
        #expect(changed.isSet)
        #expect(onMainQueue.isSet)

        await model.loadPrevious()
        #expect(model.messages.map(\.messageID) == Array(21...41))
        await model.dispose()
    }

    @Test func isLoadingHoldsWhileACallWaitsForTheServer() async throws {
        let cache = try open()
        await server.send(Self.history(1...5))
        let source = GatedSource(server: server)
        let model = MessageCollectionModel(try MessageCollection(channelURL: channel, store: cache.messages, source: source))
        await source.hold()
        let starting = Task { await model.start() }
        try await eventually("the server is asked") { source.isWaiting }
        #expect(model.isLoading)
        source.release()
        await starting.value
        #expect(!model.isLoading)
        #expect(model.messages.map(\.messageID) == Array(1...5))
        await model.dispose()
    }

    @Test func aFailureLandsInErrorAndASuccessfulCallClearsIt() async throws {
        let cache = try open()
        try await cache.messages.save(Self.history(1...3))
        await server.send(Self.history(1...4))
        await server.setOffline(true)
        let model = MessageCollectionModel(try MessageCollection(channelURL: channel, store: cache.messages, source: server))

        await model.start()
        // The cached page shows, and the failure is told, not thrown.
        #expect(model.messages.map(\.messageID) == [1, 2, 3])
        guard case FlatCacheError.sourceFailed? = model.error else {
            Issue.record("error: \(String(describing: model.error))")
            return
        }
        #expect(!model.isLoading)

        await server.setOffline(false)
        await model.sync()
        #expect(model.error == nil)
        #expect(model.messages.map(\.messageID) == [1, 2, 3, 4])
        await model.dispose()
    }

    @Test func aCancelledCallLeavesErrorAlone() async throws {
        let cache = try open()
        let source = GatedSource(server: server)
        let model = MessageCollectionModel(try MessageCollection(channelURL: channel, store: cache.messages, source: source))
        await source.hold()
        let starting = Task { await model.start() }
        try await eventually("the server is asked") { source.isWaiting }
        starting.cancel()
        source.release()
        await starting.value
        #expect(model.error == nil)
        #expect(!model.isLoading)
        await model.dispose()
    }

    @Test func pendingAndFailedFollowTheOutbox() async throws {
        let cache = try open()
        let collection = try MessageCollection(channelURL: channel, store: cache.messages, source: server, outbox: cache.outbox)
        let model = MessageCollectionModel(collection)
        await model.start()
        try await cache.outbox.send(ChatMessage(messageID: 0, channelURL: channel, createdAt: 0, text: "hi"), requestID: "r1")
        try await eventually("the typed message is pending") { model.pending.map(\.requestID) == ["r1"] }
        #expect(model.failed.isEmpty)

        await server.refuseNextSends(1, reason: "not allowed")
        let delivery = OutboxDelivery(
            outbox: cache.outbox, sender: server, store: cache.messages,
            retry: SendRetryPolicy(initialDelay: .milliseconds(5), maximumDelay: .milliseconds(20)))
        await delivery.start()
        try await delivery.waitUntilSent()
        try await eventually("the refused message is failed") { model.failed.map(\.requestID) == ["r1"] }

        try await cache.outbox.retry("r1")
        try await delivery.waitUntilSent()
        try await eventually("the sent message is shown and no longer pending") {
            model.pending.isEmpty && model.messages.map(\.text) == ["hi"]
        }
        await delivery.stop()
        await model.dispose()
    }

    @Test func theChannelListModelFollowsItsCollection() async throws {
        let cache = try open()
        await server.update(channels: [ChatChannel(channelURL: "a", kind: .group, name: "A", memberCount: 2, createdAt: 1_000)])
        let model = ChannelListModel(try ChannelListCollection(store: cache.channels, source: server))
        await model.start()
        #expect(model.channels.map(\.channelURL) == ["a"])
        #expect(!model.isLoading && model.error == nil)

        let changed = Flag()
        withObservationTracking { _ = model.channels } onChange: { changed.set() }
        await server.update(channels: [ChatChannel(channelURL: "b", kind: .group, name: "B", memberCount: 2, createdAt: 2_000)])
        try await eventually("the new channel is listed first") { model.channels.map(\.channelURL) == ["b", "a"] }
        #expect(changed.isSet)

        await server.setOffline(true)
        await model.sync()
        #expect(model.error != nil)
        await model.dispose()
    }

    @Test func builtInRecordsAreIdentifiableAndHaveDates() {
        let message = ChatMessage(messageID: 7, channelURL: "c", createdAt: 1_700_000_000_123, updatedAt: 0, text: "t")
        #expect(message.id == 7)
        #expect(message.creationDate == Date(timeIntervalSince1970: 1_700_000_000.123))
        #expect(message.updateDate == nil)
        var edited = message
        edited.updatedAt = 1_700_000_001_000
        #expect(edited.updateDate == Date(timeIntervalSince1970: 1_700_000_001))
        let channel = ChatChannel(channelURL: "c", kind: .group, name: "C", memberCount: 1, createdAt: 5_000, lastMessage: message)
        #expect(channel.id == "c")
        #expect(channel.creationDate == Date(timeIntervalSince1970: 5))
        #expect(channel.lastMessageDate == message.creationDate)
        #expect(ChatUser(userID: "mina", nickname: "Mina").id == "mina")
        // Milliseconds before 1970 round down, as the cache's own clock does.
        #expect(Date(timeIntervalSince1970: -0.0015).millisecondsSince1970 == -2)
    }

    @Test func errorsReadAsSentencesInLocalizedDescription() {
        let error: any Error = FlatCacheError.invalidLimit(-1)
        #expect(error.localizedDescription == "A page limit must be 0 or more, not -1.")
        #expect(FlatCacheError.fileSystem(.write, path: "/x", code: .ENOSPC).recoverySuggestion == "Free some storage space, then try again.")
        #expect(FlatCacheError.emptyChannelURL.recoverySuggestion == nil)
    }
}

/// The simulated server as a source whose pages wait while held (``hold()``) until ``release()``.
final class GatedSource: MessageSource, @unchecked Sendable {
    let server: SimulatedChatServer
    private let lock = NSLock()
    private var gate: Gate?
    private var waiting = false

    init(server: SimulatedChatServer) { self.server = server }

    /// Whether a page is waiting at the gate.
    var isWaiting: Bool { lock.withLock { waiting } }

    func hold() async { lock.withLock { gate = Gate() } }

    func release() {
        let held = lock.withLock { () -> Gate? in
            defer { gate = nil }
            return gate
        }
        Task { await held?.open() }
    }

    func liveEvents() async -> AsyncStream<LiveEvent<ChatMessage>> { await server.liveEvents() }

    func messages(in channelURL: String, _ direction: PageDirection, _ timestamp: Int64, limit: Int) async throws -> MessagePage<ChatMessage> {
        if let gate = lock.withLock({ gate }) {
            lock.withLock { waiting = true }
            await gate.pass()
            lock.withLock { waiting = false }
            try Task.checkCancellation()
        }
        return try await server.messages(in: channelURL, direction, timestamp, limit: limit)
    }

    func changeLogToken(in channelURL: String) async throws -> String { try await server.changeLogToken(in: channelURL) }

    func changeLog(in channelURL: String, since token: String) async throws -> MessageChangeLog<ChatMessage> {
        try await server.changeLog(in: channelURL, since: token)
    }
}
