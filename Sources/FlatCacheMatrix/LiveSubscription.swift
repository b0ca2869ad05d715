import FlatCache
import Foundation

/// The account's one long-polling `/sync` loop, shared by every listener of
/// a ``MatrixSource`` and its copies: the channel list's
/// ``MatrixSource/channelEvents()`` and each room collection's
/// ``MatrixSource/liveEvents()``.
///
/// The loop starts with the first listener and stops when the last one goes
/// (its stream finished, dropped, or its iterating task cancelled); a
/// listener that goes does not stop the others. Each answer is read once
/// (message events once if any message listener is there, room events once
/// if any channel list listener is) and every listener gets all of them.
///
/// A failing request is tried again after a pause that grows to 30 seconds,
/// from the same token, so nothing is skipped. A refused access token
/// (``MatrixError/unknownToken(softLogout:)``) ends the loop and finishes
/// every listener's stream; the next listener starts a new loop (which asks
/// with the same token, so it ends the same way until the app logs in again).
///
/// The loop runs with the settings (``MatrixSource/pollTimeout`` and the
/// others) of the source whose listener started it.
///
/// Locking: `lock` guards the listeners and the loop's state only. Nothing
/// is yielded, resumed, finished or cancelled while it is held: each of
/// those works on a snapshot taken under it.
final class LiveSubscription: @unchecked Sendable {
    /// One listener's stream.
    private enum Listener {
        case messages(AsyncStream<LiveEvent<MatrixMessage>>.Continuation)
        case channels(AsyncStream<ChannelEvent<MatrixRoom>>.Continuation)
    }

    private let lock = NSLock()
    // Guarded by `lock`.
    private var listeners = [UInt64: Listener]()
    private var lastID: UInt64 = 0
    /// The running loop; `nil` while no one listens.
    private var loop: Task<Void, Never>?
    /// Which loop is current: an older one, cancelled, no longer delivers.
    private var generation: UInt64 = 0
    /// Whether the current loop holds a token (or failed to get its first one).
    private var ready = false
    /// Listeners waiting, in `subscribe`, for the loop to be ready.
    private var waiting = [UInt64: CheckedContinuation<Void, Never>]()

    /// How many listeners there are now.
    var listenerCount: Int { lock.withLock { listeners.count } }

    /// Whether a `/sync` loop runs now.
    var isPolling: Bool { lock.withLock { loop != nil } }

    /// A message listener: returns once the loop holds its token.
    func messages(from source: MatrixSource) async -> AsyncStream<LiveEvent<MatrixMessage>> {
        let (stream, continuation) = AsyncStream.makeStream(of: LiveEvent<MatrixMessage>.self)
        await subscribe(.messages(continuation), source: source) { gone in continuation.onTermination = { _ in gone() } }
        return stream
    }

    /// A channel list listener: returns once the loop holds its token.
    func channels(from source: MatrixSource) async -> AsyncStream<ChannelEvent<MatrixRoom>> {
        let (stream, continuation) = AsyncStream.makeStream(of: ChannelEvent<MatrixRoom>.self)
        await subscribe(.channels(continuation), source: source) { gone in continuation.onTermination = { _ in gone() } }
        return stream
    }

    // MARK: - Listeners

    private func subscribe(
        _ listener: Listener, source: MatrixSource,
        onTermination: (@escaping @Sendable () -> Void) -> Void
    ) async {
        let (id, isReady) = lock.withLock { () -> (UInt64, Bool) in
            lastID += 1
            listeners[lastID] = listener
            if loop == nil {
                generation += 1
                ready = false
                let current = generation
                loop = Task { [self] in await run(generation: current, source: source) }
            }
            return (lastID, ready)
        }
        onTermination { [weak self] in self?.remove(id) }
        guard !isReady else { return }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = lock.withLock { () -> Bool in
                    guard !ready, listeners[id] != nil else { return true }
                    waiting[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            lock.withLock { waiting.removeValue(forKey: id) }?.resume()
        }
    }

    /// Drops listener `id`; the last one stops the loop.
    private func remove(_ id: UInt64) {
        let (waiter, stopped) = lock.withLock { () -> (CheckedContinuation<Void, Never>?, Task<Void, Never>?) in
            guard listeners.removeValue(forKey: id) != nil else { return (nil, nil) }
            let waiter = waiting.removeValue(forKey: id)
            guard listeners.isEmpty else { return (waiter, nil) }
            defer { (loop, ready) = (nil, false) }
            return (waiter, loop)
        }
        waiter?.resume()
        stopped?.cancel()
    }

    // MARK: - The loop

    private func run(generation: UInt64, source: MatrixSource) async {
        let filter = MatrixSource.syncFilter(rooms: nil, timelineLimit: 100, stateTypes: MatrixSource.roomLookTypes)
        var token: String?
        var failures = 0
        while !Task.isCancelled {
            do throws(MatrixError) {
                let since: String
                if let token { since = token } else { since = try await source.currentSyncToken() }
                token = since
                markReady(generation)
                let response = try await source.sync(since: since, timeout: source.pollTimeout, filter: filter)
                let batch = LiveBatch(response: response, since: since)
                let (wantsMessages, wantsChannels) = wanted()
                let messageEvents = wantsMessages ? try await source.liveEvents(in: batch) : []
                let channelEvents = wantsChannels ? try await source.roomEvents(in: batch) : []
                guard !Task.isCancelled else { break }
                deliver(messageEvents, channelEvents, generation: generation)
                token = response.nextBatch
                failures = 0
            } catch .unknownToken {
                endAll(generation)
                return
            } catch {
                // Asking for the first token failed: the listeners waiting for it go on without it.
                markReady(generation)
                failures += 1
                try? await Task.sleep(for: .seconds(min(pow(2, Double(failures - 1)), 30)))
            }
        }
    }

    /// Whether any listener wants message events, and any channel list events.
    private func wanted() -> (messages: Bool, channels: Bool) {
        lock.withLock {
            var messages = false
            var channels = false
            for listener in listeners.values {
                switch listener {
                case .messages: messages = true
                case .channels: channels = true
                }
            }
            return (messages, channels)
        }
    }

    private func markReady(_ generation: UInt64) {
        let released = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            guard generation == self.generation, !ready else { return [] }
            ready = true
            defer { waiting = [:] }
            return Array(waiting.values)
        }
        for waiter in released { waiter.resume() }
    }

    private func deliver(
        _ messageEvents: [LiveEvent<MatrixMessage>], _ channelEvents: [ChannelEvent<MatrixRoom>], generation: UInt64
    ) {
        let current = lock.withLock { generation == self.generation ? Array(listeners.values) : [] }
        for listener in current {
            switch listener {
            case .messages(let continuation): for event in messageEvents { continuation.yield(event) }
            case .channels(let continuation): for event in channelEvents { continuation.yield(event) }
            }
        }
    }

    /// The token was refused: every listener's stream ends, and the loop with them.
    private func endAll(_ generation: UInt64) {
        let (ended, waiters) = lock.withLock { () -> ([Listener], [CheckedContinuation<Void, Never>]) in
            guard generation == self.generation else { return ([], []) }
            defer { (listeners, waiting, loop, ready) = ([:], [:], nil, false) }
            return (Array(listeners.values), Array(waiting.values))
        }
        for waiter in waiters { waiter.resume() }
        for listener in ended {
            switch listener {
            case .messages(let continuation): continuation.finish()
            case .channels(let continuation): continuation.finish()
            }
        }
    }
}
