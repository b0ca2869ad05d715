import FlatCache
import FlatCacheTesting
import Foundation

/// `liveness <folder> models ...`: the `@MainActor` models. Each round makes
/// a ``MessageCollectionModel`` and a ``ChannelListModel`` over fresh
/// collections (their loops over the collections' events start at once) and
/// cancels, at random moments, every `async` call of theirs (`start`, `sync`,
/// `loadPrevious`, `loadNext`, `dispose`, which ends a model's loop), while
/// saves, live messages and outbox deliveries flow; then each model must
/// still answer on the main actor, and `dispose()` must return.
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
actor LivenessModels: LivenessFamily {
    private let world: LivenessWorld
    private let stopwatch: LivenessStopwatch

    init(folder: URL, seed: UInt64, stopwatch: LivenessStopwatch) async throws {
        world = try await LivenessWorld(folder: folder, seed: seed, writers: LivenessWorld.Writer.allCases, delivering: true)
        self.stopwatch = stopwatch
    }

    func round(_ number: Int, random: inout XorShift) async throws {
        await world.setLatency(&random)
        if random.next(8) == 0 { await world.server.failNextCalls(1) }
        let collection = try MessageCollection(
            channelURL: LivenessWorld.channelURLs[random.next(3)], store: world.cache.messages, source: world.server,
            pageSize: 10, outbox: world.cache.outbox)
        let channelList = try ChannelListCollection(store: world.cache.channels, source: world.server, pageSize: 2)
        let model = await MessageCollectionModel(collection)
        let listModel = await ChannelListModel(channelList)
        // A second model of the same collection: its loop ends only with the collection's events.
        let watcher = await MessageCollectionModel(collection)
        // More models, each disposed at a random moment: `dispose()` cancels a model's loop while events flow.
        var extras = [MessageCollectionModel<ChatMessage>]()
        for _ in 0..<3 { extras.append(await MessageCollectionModel(collection)) }

        var storm = LivenessStorm()
        storm.add("MessageCollectionModel.start", &random) { await model.start() }
        storm.add("MessageCollectionModel.loadPrevious", &random) { await model.loadPrevious() }
        storm.add("MessageCollectionModel.loadNext", &random) { await model.loadNext() }
        storm.add("MessageCollectionModel.sync", &random) { await model.sync() }
        storm.add("ChannelListModel.start", &random) { await listModel.start() }
        storm.add("ChannelListModel.sync", &random) { await listModel.sync() }
        if random.next(3) == 0 { storm.add("MessageCollectionModel.dispose", &random) { await model.dispose() } }
        if random.next(3) == 0 { storm.add("ChannelListModel.dispose", &random) { await listModel.dispose() } }
        for extra in extras { storm.add("MessageCollectionModel.dispose (one of several)", &random) { await extra.dispose() } }
        storm.listen("MessageCollection.events (beside the models)", count: 1 + random.next(2), &random) { collection.events }
        storm.churn("MessageCollection.events (churned beside the models)", times: 20, &random) { collection.events }
        await storm.run(stopwatch)

        // Everything still answers, on the main actor too.
        _ = await stopwatch.answer("MessageCollectionModel.messages") { await model.messages.count }
        _ = await stopwatch.answer("ChannelListModel.channels") { await listModel.channels.count }
        _ = await stopwatch.answer("MessageCollectionModel.pending") { await watcher.pending.count }
        await stopwatch.answer("MessageCollectionModel.dispose") { await model.dispose() }
        await stopwatch.answer("ChannelListModel.dispose") { await listModel.dispose() }
        await stopwatch.answer("MessageCollectionModel.dispose (second model)") { await watcher.dispose() }
        await stopwatch.answer("MessageCollection.events (disposed: ends)") { for await _ in collection.events {} }
    }

    func finish() async throws {
        await world.stop(stopwatch)
    }
}
