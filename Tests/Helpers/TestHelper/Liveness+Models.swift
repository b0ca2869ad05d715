import FlatCache
import FlatCacheTesting
import Foundation

/// `liveness <folder> models ...`: the `@MainActor` models. Each round makes
/// three ``MessageCollectionModel``s and a ``ChannelListModel``, each over a
/// fresh collection (their loops over the collections' events start at
/// once), and cancels, at random moments, every `async` call of theirs
/// (`start`, `sync`, `loadPrevious`, `loadNext`), and calls `dispose()`
/// (which ends a model's loop) at random moments, while saves, live messages
/// and outbox deliveries flow; then each model must still answer on the main
/// actor, and `dispose()` must return.
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
        // Three views, each a model over a collection of its own (a model's `dispose()` disposes its collection).
        var collections = [MessageCollection<ChatMessage>]()
        var models = [MessageCollectionModel<ChatMessage>]()
        for _ in 0..<3 {
            let collection = try MessageCollection(
                channelURL: LivenessWorld.channelURLs[random.next(3)], store: world.cache.messages, source: world.server,
                pageSize: 10, outbox: world.cache.outbox)
            collections.append(collection)
            models.append(await MessageCollectionModel(collection))
        }
        // A second model of the second collection: its loop ends only with the collection's events.
        let watcher = await MessageCollectionModel(collections[1])
        let channelList = try ChannelListCollection(store: world.cache.channels, source: world.server, pageSize: 2)
        let listModel = await ChannelListModel(channelList)

        // The second view is on screen before the storm: its collection follows the store, so events flow to every loop.
        let shown = models[1]
        await stopwatch.answer("MessageCollectionModel.start (before the storm)") { await shown.start() }

        var storm = LivenessStorm()
        for (index, model) in models.enumerated() {
            storm.add("MessageCollectionModel.start", &random) { await model.start() }
            storm.add("MessageCollectionModel.loadPrevious", &random) { await model.loadPrevious() }
            storm.add("MessageCollectionModel.sync", &random) { await model.sync() }
            if index == 0 { storm.add("MessageCollectionModel.loadNext", &random) { await model.loadNext() } }
            // The first is disposed during the storm, the second never, the third half the time:
            // `dispose()` cancels the model's loop while events flow.
            if index == 0 || (index == 2 && random.next(2) == 0) {
                storm.add("MessageCollectionModel.dispose", &random) { await model.dispose() }
            }
        }
        storm.add("ChannelListModel.start", &random) { await listModel.start() }
        storm.add("ChannelListModel.sync", &random) { await listModel.sync() }
        if random.next(3) == 0 { storm.add("ChannelListModel.dispose", &random) { await listModel.dispose() } }
        let followed = collections[1]
        storm.listen("MessageCollection.events (beside the models)", count: 1 + random.next(2), &random) { followed.events }
        for _ in 0..<2 {
            storm.churn("MessageCollection.events (churned beside the models)", times: 20, &random) { followed.events }
        }
        await storm.run(stopwatch)

        // Everything still answers, on the main actor too.
        for model in models {
            _ = await stopwatch.answer("MessageCollectionModel.messages") { await model.messages.count }
        }
        _ = await stopwatch.answer("ChannelListModel.channels") { await listModel.channels.count }
        _ = await stopwatch.answer("MessageCollectionModel.pending") { await watcher.pending.count }
        for model in models { await stopwatch.answer("MessageCollectionModel.dispose") { await model.dispose() } }
        await stopwatch.answer("ChannelListModel.dispose") { await listModel.dispose() }
        await stopwatch.answer("MessageCollectionModel.dispose (second model)") { await watcher.dispose() }
        await stopwatch.answer("MessageCollection.events (disposed: ends)") { for await _ in followed.events {} }
    }

    func finish() async throws {
        await world.stop(stopwatch)
    }
}
