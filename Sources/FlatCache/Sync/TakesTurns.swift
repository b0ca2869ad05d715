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

/// The line of calls of a ``TakesTurns`` actor.
struct Turns {
    private var busy = false
    private var waiting = [CheckedContinuation<Void, Never>]()

    /// Takes the turn; `false` when another call has it (then wait in line).
    mutating func take() -> Bool {
        defer { busy = true }
        return !busy
    }

    /// Waits in line for the turn.
    mutating func wait(_ call: CheckedContinuation<Void, Never>) { waiting.append(call) }

    /// Gives the turn to the next call in line, or frees it.
    mutating func handOver() {
        if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
    }

    /// Lets every waiting call go (on disposal: they then see it and end).
    mutating func releaseAll() {
        let released = waiting
        waiting = []
        for call in released { call.resume() }
    }
}

extension TakesTurns {
    /// Runs `body` when no other call of this actor is running.
    func exclusively<T>(_ body: () async throws(FlatCacheError) -> T) async throws(FlatCacheError) -> T {
        guard !isDisposed else { throw .collectionDisposed }
        if !turns.take() { await withCheckedContinuation { turns.wait($0) } }
        defer { turns.handOver() }
        guard !isDisposed else { throw .collectionDisposed }
        return try await body()
    }

    /// ``exclusively(_:)`` for a public call: when the task was cancelled
    /// while the call waited for the source (which then threw, whatever it
    /// threw), the call throws `CancellationError`, as Swift's own calls do,
    /// not a ``FlatCacheError/sourceFailed(operation:underlying:)``.
    func exclusivelyCancellable<T>(_ body: () async throws(FlatCacheError) -> T) async throws -> T {
        do {
            return try await exclusively(body)
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
