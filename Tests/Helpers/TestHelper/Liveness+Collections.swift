import FlatCache
import FlatCacheTesting
import Foundation

/// `liveness <folder> collections ...`: message collections and channel
/// lists. Each round cancels, at random moments, loops over the `events` of
/// a long-lived collection and channel list (replaced every 20 rounds) and of
/// fresh ones, and every `async` call of both (`start`, `loadPrevious`,
/// `loadNext`, `sync`, `dispose`), while saves, live messages and outbox
/// deliveries flow; then every collection must still answer, and `dispose`
/// must end a loop over its events. Every 10 rounds, a call cancelled while
/// it waits in line behind a slow one must end first (it leaves the line).
actor LivenessCollections: LivenessFamily {
    private let world: LivenessWorld
    private let stopwatch: LivenessStopwatch
    private var collection: MessageCollection<ChatMessage>
    private var channelList: ChannelListCollection<ChatChannel>

    init(folder: URL, seed: UInt64, stopwatch: LivenessStopwatch) async throws {
        world = try await LivenessWorld(folder: folder, seed: seed, writers: LivenessWorld.Writer.allCases, delivering: true)
        self.stopwatch = stopwatch
        collection = try Self.collection(world, LivenessWorld.channelURLs[0])
        channelList = try ChannelListCollection(store: world.cache.channels, source: world.server, pageSize: 2)
        try await Self.start(collection, channelList, stopwatch)
    }

    private static func collection(_ world: LivenessWorld, _ channelURL: String) throws -> MessageCollection<ChatMessage> {
        try MessageCollection(
            channelURL: channelURL, store: world.cache.messages, source: world.server, pageSize: 10, outbox: world.cache.outbox)
    }

    private static func start(
        _ collection: MessageCollection<ChatMessage>, _ channelList: ChannelListCollection<ChatChannel>,
        _ stopwatch: LivenessStopwatch
    ) async throws {
        // A failure scripted by an earlier round may fail a start: it must still answer.
        _ = try? await stopwatch.answer("MessageCollection.start") { try await collection.start() }
        _ = try? await stopwatch.answer("ChannelListCollection.start") { try await channelList.start() }
    }

    func round(_ number: Int, random: inout XorShift) async throws {
        await world.setLatency(&random)
        if random.next(8) == 0 { await world.server.failNextCalls(1) }
        if number > 0, number % 20 == 0 {
            let (oldCollection, oldList) = (collection, channelList)
            await stopwatch.answer("MessageCollection.dispose") { await oldCollection.dispose() }
            await stopwatch.answer("ChannelListCollection.dispose") { await oldList.dispose() }
            collection = try Self.collection(world, LivenessWorld.channelURLs[random.next(3)])
            channelList = try ChannelListCollection(store: world.cache.channels, source: world.server, pageSize: 2)
            try await Self.start(collection, channelList, stopwatch)
        }
        let (kept, keptList) = (collection, channelList)
        let fresh = try Self.collection(world, LivenessWorld.channelURLs[random.next(3)])
        let freshList = try ChannelListCollection(store: world.cache.channels, source: world.server, pageSize: 2)

        var storm = LivenessStorm()
        storm.listen("MessageCollection.events", count: 2 + random.next(3), &random) { kept.events }
        storm.listen("ChannelListCollection.events", count: 1 + random.next(2), &random) { keptList.events }
        for _ in 0..<2 { storm.churn("MessageCollection.events (churned)", times: 30, &random) { kept.events } }
        storm.churn("ChannelListCollection.events (churned)", times: 20, &random) { keptList.events }
        storm.listen("MessageCollection.events (new collection)", count: 1 + random.next(2), &random) { fresh.events }
        storm.listen("ChannelListCollection.events (new list)", count: 1, &random) { freshList.events }
        storm.add("MessageCollection.start", &random) { try await fresh.start() }
        storm.add("MessageCollection.loadPrevious", &random) { try await fresh.loadPrevious() }
        storm.add("MessageCollection.loadNext", &random) { try await fresh.loadNext() }
        storm.add("MessageCollection.sync", &random) { try await fresh.sync() }
        storm.add("MessageCollection.sync (started)", &random) { try await kept.sync() }
        storm.add("MessageCollection.loadPrevious (started)", &random) { try await kept.loadPrevious() }
        storm.add("ChannelListCollection.start", &random) { try await freshList.start() }
        storm.add("ChannelListCollection.sync", &random) { try await freshList.sync() }
        storm.add("ChannelListCollection.sync (started)", &random) { try await keptList.sync() }
        if random.next(3) == 0 { storm.add("MessageCollection.dispose", &random) { await fresh.dispose() } }
        if random.next(3) == 0 { storm.add("ChannelListCollection.dispose", &random) { await freshList.dispose() } }
        await storm.run(stopwatch)

        // Everything still answers.
        _ = await stopwatch.answer("MessageCollection.messages") { await kept.messages.count }
        _ = await stopwatch.answer("MessageCollection.pending") { await kept.pending.count }
        _ = await stopwatch.answer("ChannelListCollection.channels") { await keptList.channels.count }
        _ = try? await stopwatch.answer("Outbox.entries") { try await world.cache.outbox.entries() }
        _ = try? await stopwatch.answer("MessageCollection.sync (after the storm)") { try await kept.sync() }
        await stopwatch.answer("MessageCollection.dispose") { await fresh.dispose() }
        await stopwatch.answer("ChannelListCollection.dispose") { await freshList.dispose() }
        await stopwatch.answer("MessageCollection.events (disposed: ends)") { for await _ in fresh.events {} }
        await stopwatch.answer("ChannelListCollection.events (disposed: ends)") { for await _ in freshList.events {} }
        if number % 10 == 5, !Liveness.skips("line") { await checkCancelledCallLeavesTheLine(kept) }
    }

    /// A call cancelled while it waits in line for the collection's turn ends
    /// before the call ahead of it, which waits 1 s for the server: it leaves
    /// the line ("a cancelled call ends at once", DocC: Observing changes).
    private func checkCancelledCallLeavesTheLine(_ kept: MessageCollection<ChatMessage>) async {
        await world.server.setLatency(.seconds(1))
        let aheadEnded = Flag()
        let ahead = Task {
            _ = try? await kept.sync()
            aheadEnded.set()
        }
        try? await Task.sleep(for: .milliseconds(50))  // the sync is in line first, or has the turn
        // The sync's first call to the server takes 1 s; the ones after it (change log pages), none.
        let server = world.server
        let quick = Task {
            try? await Task.sleep(for: .milliseconds(150))
            await server.setLatency(.zero)
        }
        await stopwatch.cancel("MessageCollection.loadPrevious (in line behind a slow sync)", after: .milliseconds(20)) {
            _ = try await kept.loadPrevious()
        }
        let waitedForTheCallAhead = aheadEnded.isSet
        await quick.value
        await stopwatch.answer("MessageCollection.sync (slow, ahead in line)") { await ahead.value }
        if waitedForTheCallAhead {
            Liveness.violation(
                "MessageCollection.loadPrevious cancelled while in line ended only after the call ahead of it (a sync waiting 1 s for the server)")
        }
    }

    func finish() async throws {
        let (kept, keptList) = (collection, channelList)
        await stopwatch.answer("MessageCollection.dispose") { await kept.dispose() }
        await stopwatch.answer("ChannelListCollection.dispose") { await keptList.dispose() }
        await world.stop(stopwatch)
    }
}
