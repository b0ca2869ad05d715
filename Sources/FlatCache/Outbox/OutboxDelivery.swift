/// Sends what waits in an ``Outbox`` through a ``MessageSender``: each
/// channel's entries in the order queued, one at a time per channel, now and
/// whenever one is queued or retried, until ``stop()``.
///
/// A send that fails in a way retrying can help (``SendFailure/offline(_:)``,
/// ``SendFailure/temporary(_:)``, any other error) leaves the entry pending
/// and is tried again after a backoff (``SendRetryPolicy``), or at once when
/// ``resume()`` says the network is back; a rate limit waits the time the
/// server asks. A refusal (``SendFailure/refused(_:)``) marks the entry
/// failed, and the channel's next entries go on. The server's copy is saved
/// in the message store (when one is given) and confirms the entry.
///
/// ```swift
/// let delivery = OutboxDelivery(outbox: cache.outbox, sender: server, store: cache.messages)
/// await delivery.start()
/// try await cache.outbox.send(ChatMessage(messageID: 0, channelURL: channelURL, createdAt: 0, text: "Hi"))
/// try await delivery.waitUntilSent()   // the server has it
/// await delivery.stop()
/// ```
///
/// Entries left sending by a crash or a kill are sent again under their key
/// when a delivery starts: a server that keeps its promise (see
/// ``MessageSender/send(_:requestID:)``) makes each message once. Run one
/// delivery per outbox in a process.
public actor OutboxDelivery<Sender: MessageSender> {
    /// The record type of the messages sent.
    public typealias Message = Sender.Message

    /// The outbox it sends from.
    public nonisolated let outbox: Outbox<Message>
    /// How long it waits before sending again after a failure retrying can help.
    public nonisolated let retryPolicy: SendRetryPolicy
    /// The last error the delivery met reading or writing the outbox or the
    /// message store (a full disk); it keeps trying after a backoff. `nil` when none.
    public private(set) var lastError: FlatCacheError?

    private let sender: Sender
    private let store: MessageStore<Message>?
    private var listening: Task<Void, Never>?
    private var workers = [String: Task<Void, Never>]()
    /// Channels with an entry queued or retried while their worker was busy: it looks again before it ends.
    private var lookAgain = Set<String>()
    /// How many retries (``Outbox/retry(_:with:)``) each channel's entries had: a send that fails
    /// after one does not wait out its backoff.
    private var retries = [String: Int]()
    private var pauses = [Int: Pause]()
    private var nextPause = 0
    private var isStopped = false
    /// Runs after a failed send is recorded, before its backoff: tests widen that moment with it.
    private var beforeBackoff: (@Sendable () async -> Void)?

    /// Sets ``beforeBackoff`` (tests).
    func setBeforeBackoff(_ hook: (@Sendable () async -> Void)?) { beforeBackoff = hook }

    /// A wait before sending again, ended by its timer or, when `interruptible`, by ``resume()``.
    private struct Pause {
        let channelURL: String
        let interruptible: Bool
        let continuation: CheckedContinuation<Void, Never>
        var timer: Task<Void, Never>?
    }

    /// A delivery that has not started.
    ///
    /// - Parameters:
    ///   - outbox: `cache.outbox`.
    ///   - sender: The chat server.
    ///   - store: Where the server's copies are saved (`cache.messages`); `nil` saves none.
    ///   - retry: The backoff after failures retrying can help.
    public init(
        outbox: Outbox<Message>, sender: Sender, store: MessageStore<Message>? = nil,
        retry: SendRetryPolicy = SendRetryPolicy()
    ) {
        self.outbox = outbox
        self.sender = sender
        self.store = store
        self.retryPolicy = retry
    }

    /// Starts sending: what waits now (entries left sending by a crash
    /// included), and each entry queued or retried later. A second call does nothing.
    public func start() {
        guard listening == nil, !isStopped else { return }
        let events = outbox.events()  // before the first look: nothing queued in between is missed
        listening = Task { [weak self] in
            await self?.wakeEveryChannel()
            for await event in events {
                guard let self, !Task.isCancelled else { return }
                if Self.bringsWork(event) { await self.wake(event.entry.channelURL, retried: Self.isRetry(event)) }
            }
        }
    }

    /// Says the network is back: every send waiting out a backoff after a
    /// failure is tried now (a rate limit's wait is kept).
    public func resume() {
        for (id, pause) in pauses where pause.interruptible { endPause(id) }
    }

    /// Returns once no entry is pending or sending: every message queued has
    /// reached the server or was refused (failed entries stay). Waits as long
    /// as that takes (offline: until the network is back); cancel the task to stop waiting.
    ///
    /// - Throws: `CancellationError` when the task is cancelled, or an error reading the outbox.
    public nonisolated func waitUntilSent() async throws {
        let events = outbox.events()
        var iterator = events.makeAsyncIterator()
        while try await outbox.entries().contains(where: { !$0.isFailed }) {
            try Task.checkCancellation()
            // Every change is an event: wait for the next, then look again. The outbox's
            // events never end on their own: a stream that ended means this task was
            // cancelled, and entries still wait (returning would say they were sent).
            guard await iterator.next() != nil else { throw CancellationError() }
        }
    }

    /// Stops sending: waits cut short, sends under way cancelled (an entry
    /// whose answer did not come stays sending, and is sent again under its
    /// key by the next delivery). Returns once every channel's work has ended.
    public func stop() async {
        isStopped = true
        listening?.cancel()
        listening = nil
        let running = Array(workers.values)
        for worker in running { worker.cancel() }
        for id in Array(pauses.keys) { endPause(id) }
        for worker in running { await worker.value }
    }

    // MARK: - Work per channel

    private func wakeEveryChannel() async {
        do {
            for channelURL in Set(try await outbox.entries().filter { !$0.isFailed }.map(\.channelURL)) { wake(channelURL) }
        } catch {
            lastError = error
        }
    }

    /// Whether `event` gives the channel something new to send: an entry
    /// queued, or retried. Not a send's own failure (pending again, with
    /// ``OutboxEntry/lastFailure``): waking for it would cut its backoff short.
    private static func bringsWork(_ event: OutboxEvent<Message>) -> Bool {
        switch event {
        case .queued: true
        case .changed(let entry): if case .pending = entry.state { entry.lastFailure == nil } else { false }
        case .confirmed, .cancelled: false
        }
    }

    /// Whether `event` is an entry made pending again by ``Outbox/retry(_:with:)``
    /// (a pending entry with no failure noted: only a retry writes one after queuing).
    private static func isRetry(_ event: OutboxEvent<Message>) -> Bool {
        if case .changed(let entry) = event, case .pending = entry.state { entry.lastFailure == nil } else { false }
    }

    /// Makes sure the channel's entries are being sent: a worker started, or the running one told to look again.
    private func wake(_ channelURL: String, retried: Bool = false) {
        guard !isStopped else { return }
        if retried { retries[channelURL, default: 0] += 1 }
        if workers[channelURL] != nil {
            lookAgain.insert(channelURL)
            for (id, pause) in pauses where pause.channelURL == channelURL && pause.interruptible { endPause(id) }
            return
        }
        workers[channelURL] = Task { await self.work(on: channelURL) }
    }

    /// Sends the channel's entries, oldest first, until none is waiting to be sent.
    private func work(on channelURL: String) async {
        var failuresInARow = 0
        while !isStopped, !Task.isCancelled {
            lookAgain.remove(channelURL)
            let next: OutboxEntry<Message>?
            do {
                next = try await outbox.entries(in: channelURL).first { !$0.isFailed }
            } catch {
                failuresInARow += 1
                await trouble(error, in: channelURL, failures: failuresInARow)
                continue
            }
            guard let next else {
                if lookAgain.contains(channelURL) { continue }
                break
            }
            do {
                if try await send(next, failures: failuresInARow + 1) { failuresInARow = 0 } else { failuresInARow += 1 }
            } catch {
                failuresInARow += 1
                await trouble(error, in: channelURL, failures: failuresInARow)
            }
        }
        workers[channelURL] = nil
    }

    /// Sends one entry and records what happened; `false` after a failure
    /// retrying can help (then it has waited its backoff: the `failures`th in a row).
    private func send(_ waiting: OutboxEntry<Message>, failures: Int) async throws(FlatCacheError) -> Bool {
        let retriesBefore = retries[waiting.channelURL, default: 0]
        guard let entry = try await outbox.beginSending(waiting.requestID) else { return true }
        let copy: Message
        do {
            copy = try await sender.send(entry.message, requestID: entry.requestID)
        } catch {
            if Task.isCancelled || isStopped { return true }  // stopping: it stays sending, sent again next time
            let failure = (error as? SendFailure) ?? .temporary("\(error)")
            if case .refused(let reason) = failure {
                try await outbox.sendFailed(entry.requestID, failure: reason, forGood: true)
                return true
            }
            try await outbox.sendFailed(entry.requestID, failure: failure.description, forGood: false)
            await beforeBackoff?()
            if case .rateLimited(let delay) = failure {
                await pause(entry.channelURL, for: delay, interruptible: false)
            } else {
                await pause(
                    entry.channelURL, for: retryPolicy.delay(afterFailures: failures), interruptible: true,
                    unlessRetriedSince: retriesBefore)
            }
            return false
        }
        // Cached before confirmed: a crash in between sends it again under its key, never loses it.
        if let store, copy.isSent, copy.isInGroupChannel, copy.channelURL == entry.channelURL {
            try await store.save(CollectionOfOne(copy))
        }
        _ = try await outbox.confirm(entry.requestID, with: copy)
        return true
    }

    /// Notes an error of the cache's own and waits a backoff before trying again.
    private func trouble(_ error: FlatCacheError, in channelURL: String, failures: Int) async {
        lastError = error
        await pause(channelURL, for: retryPolicy.delay(afterFailures: failures), interruptible: true)
    }

    // MARK: - Waiting

    private func pause(
        _ channelURL: String, for delay: Duration, interruptible: Bool, unlessRetriedSince retriesBefore: Int? = nil
    ) async {
        guard !isStopped, !Task.isCancelled else { return }
        // An entry retried since the send began (its event came before this pause could be
        // ended by it): the pause must not start, or the retry would wait out the old backoff.
        if interruptible, let retriesBefore, retries[channelURL, default: 0] != retriesBefore { return }
        let id = nextPause
        nextPause += 1
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            pauses[id] = Pause(channelURL: channelURL, interruptible: interruptible, continuation: continuation)
            pauses[id]?.timer = Task { [weak self] in
                try? await Task.sleep(for: delay)
                await self?.endPause(id)
            }
        }
    }

    private func endPause(_ id: Int) {
        guard let pause = pauses.removeValue(forKey: id) else { return }
        pause.timer?.cancel()
        pause.continuation.resume()
    }
}
