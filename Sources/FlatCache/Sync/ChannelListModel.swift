public import Observation

/// A ``ChannelListCollection`` as an `@Observable` model on the main actor:
/// what a SwiftUI channel list binds to.
///
/// Its properties copy the collection's state after each of its events and
/// each call, on the main actor. Its calls never throw: a failure lands in
/// ``error``, and the list stays as it was.
///
/// ```swift
/// let list = try ChannelListCollection(store: cache.channels, source: server)
/// let model = ChannelListModel(list)   // in a SwiftUI view: @State var model
/// await model.start()                  // in the view: .task { await model.start() }
/// print(model.channels.map(\.name), model.error as Any)
/// ```
///
/// It listens to the collection's ``ChannelListCollection/events`` from the
/// moment it is made: make it before the collection starts (or let it start
/// the collection with ``start()``).
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@MainActor @Observable
public final class ChannelListModel<Channel: ChannelRecord> {
    /// The collection it shows.
    @ObservationIgnored public let collection: ChannelListCollection<Channel>
    /// What the list shows, most recent last message first (``ChannelListCollection/channels``).
    public private(set) var channels = [Channel]()
    /// Whether a call of this model (``start()``, ``sync()``) is under way: show a spinner.
    public private(set) var isLoading = false
    /// What went wrong last: the error of the last call that failed, or of
    /// work the collection did on its own (``ChannelListEvent/failed(_:)``);
    /// `nil` again once a call succeeds. A cancelled call leaves it alone.
    public private(set) var error: (any Error)?

    @ObservationIgnored private var callsUnderWay = 0
    @ObservationIgnored private var listening: Task<Void, Never>?

    /// A model of `collection`, listening to its events from now on.
    ///
    /// - Parameter collection: A collection; it may have started already
    ///   (then the model shows its state after its next event or call).
    public init(_ collection: ChannelListCollection<Channel>) {
        self.collection = collection
        let events = collection.events
        listening = Task { [weak self] in
            for await event in events {
                guard let self else { return }
                if case .failed(let failure) = event { self.error = failure }
                await self.refresh()
            }
        }
    }

    /// Starts the collection (``ChannelListCollection/start()``): the cached
    /// list shows at once, then the server's.
    public func start() async {
        await perform { collection in try await collection.start() }
    }

    /// Catches up with the server (``ChannelListCollection/sync()``): call it when the connection is back.
    public func sync() async {
        await perform { collection in try await collection.sync() }
    }

    /// Stops the collection (``ChannelListCollection/dispose()``) and this model's listening.
    public func dispose() async {
        await collection.dispose()
        listening?.cancel()
        listening = nil
    }

    /// Runs a call of the collection, keeping ``isLoading`` and ``error`` true to it.
    private func perform(_ call: (ChannelListCollection<Channel>) async throws -> Void) async {
        callsUnderWay += 1
        isLoading = true
        do {
            try await call(collection)
            error = nil
        } catch {
            if !isCancellation(error) { self.error = error }
        }
        await refresh()
        callsUnderWay -= 1
        isLoading = callsUnderWay > 0
    }

    /// Copies the collection's list.
    private func refresh() async {
        channels = await collection.channels
    }
}
