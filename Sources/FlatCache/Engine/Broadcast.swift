import Foundation

/// Hands every element to every listener: each ``subscribe()`` is a stream
/// of its own that gets every element yielded from then on, once, in order.
///
/// The collections' and the outbox's `events` are broadcasts, so that two
/// loops over them each see every event (a plain `AsyncStream` splits its
/// elements between them). A broadcast made `keepingEarlyElements` keeps
/// what is yielded before its first listener comes, and gives it to that
/// one: a collection's events from `start()` then reach a loop that a task
/// began just before it, however late the task runs.
final class Broadcast<Element: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    // Guarded by `lock`.
    private var listeners = [Int: AsyncStream<Element>.Continuation]()
    private var nextID = 0
    private var isFinished = false
    /// Elements yielded before the first listener, kept for it; `nil` once it came (or when not kept).
    private var early: [Element]?

    /// A broadcast with no listener yet.
    /// - Parameter keepingEarlyElements: Whether elements yielded before the
    ///   first listener are kept for it (else they reach nobody).
    init(keepingEarlyElements: Bool = false) {
        early = keepingEarlyElements ? [] : nil
    }

    /// How many listeners are iterating (or may still iterate) their streams.
    var listenerCount: Int { lock.withLock { listeners.count } }

    /// A new listener: every element yielded from now on (the first listener
    /// of a broadcast keeping early elements: those before it, too). The
    /// stream ends after ``finish()``; a listener that stops iterating it
    /// (its task cancelled, the stream let go) leaves.
    func subscribe() -> AsyncStream<Element> {
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self)
        let id = lock.withLock {
            nextID += 1
            return nextID
        }
        continuation.onTermination = { [weak self] _ in self?.remove(id) }
        let finished = lock.withLock { () -> Bool in
            // Yielded under the lock: no element yielded meanwhile can come before these.
            for element in early ?? [] { continuation.yield(element) }
            early = nil
            if !isFinished { listeners[id] = continuation }
            return isFinished
        }
        if finished { continuation.finish() }
        return stream
    }

    /// Gives `element` to every listener (or keeps it for the first one).
    func yield(_ element: Element) {
        lock.withLock {
            guard !isFinished else { return }
            if early != nil {
                early?.append(element)
                return
            }
            for continuation in listeners.values { continuation.yield(element) }
        }
    }

    /// Ends every listener's stream, and those of listeners to come (after
    /// the early elements, for a first listener still to come).
    func finish() {
        let ended = lock.withLock { () -> [AsyncStream<Element>.Continuation] in
            isFinished = true
            defer { listeners = [:] }
            return Array(listeners.values)
        }
        // Outside the lock: finishing calls `onTermination`, which takes it.
        for continuation in ended { continuation.finish() }
    }

    private func remove(_ id: Int) {
        _ = lock.withLock { listeners.removeValue(forKey: id) }
    }
}
