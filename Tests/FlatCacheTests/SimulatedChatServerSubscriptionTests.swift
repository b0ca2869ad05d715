import FlatCache
import FlatCacheTesting
import Foundation
import Testing

/// ``SimulatedChatServer/openLiveSubscriptions`` counts the live streams a
/// test's collections hold open, and sees them close.
@Suite(.timeLimit(.minutes(1))) struct SimulatedChatServerSubscriptionTests {
    @Test func openSubscriptionsAreCountedUntilTheirStreamsEnd() async throws {
        let server = SimulatedChatServer()
        #expect(await server.openLiveSubscriptions == 0)
        let messages = await server.liveEvents()
        let channels = await server.channelEvents()
        #expect(await server.openLiveSubscriptions == 2)

        let reading = Task { for await _ in messages {} }
        let listing = Task { for await _ in channels {} }
        reading.cancel()
        await reading.value
        #expect(await openSubscriptions(of: server, becomes: 1))
        listing.cancel()
        await listing.value
        #expect(await openSubscriptions(of: server, becomes: 0))
    }

    @Test func aCollectionHoldsOneSubscriptionUntilItIsDisposed() async throws {
        let folder = try TemporaryFolder()
        let server = SimulatedChatServer()
        let cache = try ChatCache(directory: folder.url)
        let collection = try MessageCollection(channelURL: "trip", store: cache.messages, source: server)
        try await collection.start()
        #expect(await server.openLiveSubscriptions == 1)
        await collection.dispose()
        #expect(await openSubscriptions(of: server, becomes: 0))
    }

    /// Whether the count reaches `count` within 30 s (a stream's end reaches the server a moment
    /// later, through a task of its own: on a 2-core machine running every suite at once, it once took
    /// longer than 5 s, and passed alone at once; a subscription that never ends still fails).
    private func openSubscriptions(of server: SimulatedChatServer, becomes count: Int) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(30)
        while await server.openLiveSubscriptions != count, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        return await server.openLiveSubscriptions == count
    }
}
