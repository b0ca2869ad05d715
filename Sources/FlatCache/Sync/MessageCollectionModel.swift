public import Observation

/// A ``MessageCollection`` as an `@Observable` model on the main actor: what
/// a SwiftUI chat view binds to.
///
/// Its properties copy the collection's state after each of its events and
/// each call, on the main actor, so a view that reads them is redrawn when
/// they change. Its calls never throw: a failure lands in ``error``, and the
/// view shows what it showed before.
///
/// ```swift
/// let collection = try MessageCollection(channelURL: channelURL, store: cache.messages, source: server)
/// let model = MessageCollectionModel(collection)   // in a SwiftUI view: @State var model
/// await model.start()                               // in the view: .task { await model.start() }
/// print(model.messages.count, model.hasPrevious, model.error as Any)
/// ```
///
/// In a SwiftUI view, `List(model.messages) { Text($0.text) }` redraws as
/// messages come, and `.refreshable { await model.sync() }` catches up
/// (the built-in records are `Identifiable`).
///
/// It listens to the collection's ``MessageCollection/events`` from the
/// moment it is made: make it before the collection starts (or let it start
/// the collection with ``start()``).
@available(macOS 14, iOS 17, tvOS 17, watchOS 10, *)
@MainActor @Observable
public final class MessageCollectionModel<Message: MessageRecord> {
    /// The collection it shows.
    @ObservationIgnored public let collection: MessageCollection<Message>
    /// What the view shows, oldest first (``MessageCollection/messages``).
    public private(set) var messages = [Message]()
    /// The channel's messages not sent yet, in the order queued: pending,
    /// being sent, or failed (``MessageCollection/pending``); shown after ``messages``.
    public private(set) var pending = [OutboxEntry<Message>]()
    /// Whether older messages may exist than the oldest shown (``MessageCollection/hasPrevious``).
    public private(set) var hasPrevious = true
    /// Whether newer messages may exist than the newest shown (``MessageCollection/hasNext``).
    public private(set) var hasNext: Bool
    /// Whether a call of this model (``start()``, ``sync()``, ``loadPrevious()``,
    /// ``loadNext()``) is under way: show a spinner.
    public private(set) var isLoading = false
    /// What went wrong last: the error of the last call that failed, or of
    /// work the collection did on its own (``MessageCollectionEvent/failed(_:)``);
    /// `nil` again once a call succeeds. A cancelled call leaves it alone.
    public private(set) var error: (any Error)?
    /// Whether the channel was deleted or left (``MessageCollectionEvent/channelDeleted``): close the view.
    public private(set) var isChannelDeleted = false

    /// The entries of ``pending`` the server refused: show them with a retry button.
    public var failed: [OutboxEntry<Message>] { pending.filter(\.isFailed) }

    @ObservationIgnored private var callsUnderWay = 0
    @ObservationIgnored private var listening: Task<Void, Never>?

    /// A model of `collection`, listening to its events from now on.
    ///
    /// - Parameter collection: A collection; it may have started already
    ///   (then the model shows its state after its next event or call).
    public init(_ collection: MessageCollection<Message>) {
        self.collection = collection
        hasNext = collection.startingPoint != MessageCollection<Message>.now
        let events = collection.events
        listening = Task { [weak self] in
            for await event in events {
                guard let self else { return }
                await self.apply(event)
            }
        }
    }

    /// Starts the collection (``MessageCollection/start()``): the cached page
    /// shows at once, then the server's.
    public func start() async {
        await perform { collection in try await collection.start() }
    }

    /// Catches up with the server (``MessageCollection/sync()``): call it when the connection is back.
    public func sync() async {
        await perform { collection in try await collection.sync() }
    }

    /// Shows the page before the oldest message shown (``MessageCollection/loadPrevious()``).
    public func loadPrevious() async {
        await perform { collection in try await collection.loadPrevious() }
    }

    /// Shows the page after the newest message shown (``MessageCollection/loadNext()``).
    public func loadNext() async {
        await perform { collection in try await collection.loadNext() }
    }

    /// Stops the collection (``MessageCollection/dispose()``) and this model's listening.
    public func dispose() async {
        await collection.dispose()
        listening?.cancel()
        listening = nil
    }

    /// Runs a call of the collection, keeping ``isLoading`` and ``error`` true to it.
    private func perform(_ call: (MessageCollection<Message>) async throws -> Void) async {
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

    private func apply(_ event: MessageCollectionEvent<Message>) async {
        switch event {
        case .failed(let failure): error = failure
        case .channelDeleted: isChannelDeleted = true
        default: break
        }
        await refresh()
    }

    /// Copies the collection's state, read in one turn of it.
    private func refresh() async {
        let state = await collection.viewState
        messages = state.messages
        pending = state.pending
        if hasPrevious != state.hasPrevious { hasPrevious = state.hasPrevious }
        if hasNext != state.hasNext { hasNext = state.hasNext }
    }
}

/// Whether `error` means a call was cancelled rather than failed (the models leave ``MessageCollectionModel/error`` alone then).
func isCancellation(_ error: any Error) -> Bool {
    if error is CancellationError { return true }
    if case FlatCacheError.sourceFailed(_, let underlying) = error { return underlying is CancellationError }
    return false
}
