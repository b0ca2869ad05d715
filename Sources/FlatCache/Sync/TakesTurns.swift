/// An actor whose calls await other work (a source, the disk) yet must not
/// interleave: each call takes its turn, the others wait in line, in the
/// order they came. The collections are such actors, so that concurrent
/// calls never deliver a message twice or out of order.
protocol TakesTurns: Actor {
    /// Who has the turn, and who waits.
    var turns: Turns { get set }
    /// Whether the actor was disposed: calls then end with ``FlatCacheError/collectionDisposed``.
    var isDisposed: Bool { get }
}

extension TakesTurns {
    /// Takes the waiting call `id` out of line (its task was cancelled): it ends without its turn.
    func leaveLine(_ id: Int) { turns.leave(id) }
}

/// The line of calls of a ``TakesTurns`` actor.
struct Turns {
    private var busy = false
    /// The calls in line, each resumed with `true` when it gets the turn (or the actor was
    /// disposed), `false` when it left the line (cancelled).
    private var waiting = [(id: Int, call: CheckedContinuation<Bool, Never>)]()
    private var lastID = 0

    /// Takes the turn; `false` when another call has it (then wait in line).
    mutating func take() -> Bool {
        defer { busy = true }
        return !busy
    }

    /// A number for a call about to wait in line.
    mutating func nextID() -> Int {
        lastID += 1
        return lastID
    }

    /// Waits in line for the turn.
    mutating func wait(_ id: Int, _ call: CheckedContinuation<Bool, Never>) { waiting.append((id, call)) }

    /// Takes call `id` out of line, if it still waits: it ends without the turn.
    mutating func leave(_ id: Int) {
        guard let index = waiting.firstIndex(where: { $0.id == id }) else { return }
        waiting.remove(at: index).call.resume(returning: false)
    }

    /// Gives the turn to the next call in line, or frees it.
    mutating func handOver() {
        if waiting.isEmpty { busy = false } else { waiting.removeFirst().call.resume(returning: true) }
    }

    /// Lets every waiting call go (on disposal: they then see it and end).
    mutating func releaseAll() {
        let released = waiting
        waiting = []
        for (_, call) in released { call.resume(returning: true) }
    }
}

extension TakesTurns {
    /// Runs `body` when no other call of this actor is running.
    func exclusively<T>(_ body: () async throws(FlatCacheError) -> T) async throws(FlatCacheError) -> T {
        try await exclusively(leavingLineOnCancel: false, body)
    }

    /// ``exclusively(_:)``; with `leavingLineOnCancel`, a call whose task is cancelled while it
    /// waits in line leaves it at once, throwing ``FlatCacheError/sourceFailed(operation:underlying:)``
    /// with `CancellationError` (which ``exclusivelyCancellable(_:)`` turns into `CancellationError`).
    private func exclusively<T>(
        leavingLineOnCancel: Bool, _ body: () async throws(FlatCacheError) -> T
    ) async throws(FlatCacheError) -> T {
        guard !isDisposed else { throw .collectionDisposed }
        if !turns.take() {
            let id = turns.nextID()
            let gotTurn = await withTaskCancellationHandler {
                await withCheckedContinuation { turns.wait(id, $0) }
            } onCancel: {
                // Runs on the cancelling thread: the line is the actor's, so it hops there.
                if leavingLineOnCancel { Task { await self.leaveLine(id) } }
            }
            guard gotTurn else { throw .sourceFailed(operation: "waiting for its turn", underlying: CancellationError()) }
        }
        defer { turns.handOver() }
        guard !isDisposed else { throw .collectionDisposed }
        return try await body()
    }

    /// ``exclusively(_:)`` for a public call: when the task was cancelled
    /// while the call waited in line for its turn (it leaves the line at once)
    /// or for the source (which then threw, whatever it threw), the call
    /// throws `CancellationError`, as Swift's own calls do,
    /// not a ``FlatCacheError/sourceFailed(operation:underlying:)``.
    func exclusivelyCancellable<T>(_ body: () async throws(FlatCacheError) -> T) async throws -> T {
        do {
            return try await exclusively(leavingLineOnCancel: true, body)
        } catch {
            if case .sourceFailed(_, let underlying) = error, underlying is CancellationError || Task.isCancelled {
                throw CancellationError()
            }
            throw error
        }
    }

    /// Calls a source; its failure becomes ``FlatCacheError/sourceFailed(operation:underlying:)``,
    /// and a disposal meanwhile ``FlatCacheError/collectionDisposed``.
    func ask<T: Sendable>(_ operation: String, _ call: @Sendable () async throws -> T) async throws(FlatCacheError) -> T {
        let answer: T
        do {
            answer = try await call()
        } catch {
            throw isDisposed ? .collectionDisposed : .sourceFailed(operation: operation, underlying: error)
        }
        if isDisposed { throw .collectionDisposed }
        return answer
    }
}
