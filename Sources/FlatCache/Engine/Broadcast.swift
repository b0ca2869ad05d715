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
///
/// Lock rule: no stream is yielded to or finished while `lock` is held.
/// Yielding resumes the listener's task, which takes that task's status
/// lock; a cancelled listener's `onTermination` runs under the same status
/// lock and takes `lock` to leave. Holding `lock` across a yield deadlocked
/// a collection whose listener was cancelled while events flowed (issue 31).
/// So elements wait in `pending`, in order, and one caller at a time (the
/// one that found nobody delivering) hands them out with the lock released.
/// (swift-async-algorithms' `share()` would need macOS 15 and a source
/// sequence; this is pushed to, and keeps early elements.)
final class Broadcast<Element: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    // Guarded by `lock`.
    private var listeners = [Int: AsyncStream<Element>.Continuation]()
    private var nextID = 0
    private var isFinished = false
    /// Elements yielded before the first listener, kept for it; `nil` once it came (or when not kept).
    private var early: [Element]?
    /// What waits to be handed out, in order.
    private var pending = [Delivery]()
    /// Whether a caller is handing out `pending` (outside the lock).
    private var isDelivering = false

    /// One step of delivery: an element for the listeners that were there
    /// when it was yielded (ids up to `upTo`), or an early one for the first
    /// listener, or the end of one stream or (`nil`) of every listener's.
    private enum Delivery {
        case element(Element, upTo: Int)
        case early(Element, for: AsyncStream<Element>.Continuation)
        case finish(AsyncStream<Element>.Continuation?)
    }

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
        let deliver = lock.withLock { () -> Bool in
            // Queued behind what waits already: no element yielded later can come before these.
            for element in early ?? [] { pending.append(.early(element, for: continuation)) }
            early = nil
            if isFinished {
                pending.append(.finish(continuation))
            } else {
                listeners[id] = continuation
            }
            return takeDeliveryLocked()
        }
        if deliver { deliverPending() }
        return stream
    }

    /// Gives `element` to every listener (or keeps it for the first one).
    func yield(_ element: Element) {
        let deliver = lock.withLock { () -> Bool in
            guard !isFinished else { return false }
            if early != nil {
                early?.append(element)
                return false
            }
            guard !listeners.isEmpty else { return false }
            pending.append(.element(element, upTo: nextID))
            return takeDeliveryLocked()
        }
        if deliver { deliverPending() }
    }

    /// Ends every listener's stream, after the elements yielded before, and
    /// those of listeners to come (after the early elements, for a first
    /// listener still to come).
    func finish() {
        let deliver = lock.withLock { () -> Bool in
            guard !isFinished else { return false }
            isFinished = true
            pending.append(.finish(nil))
            return takeDeliveryLocked()
        }
        if deliver { deliverPending() }
    }

    private func remove(_ id: Int) {
        _ = lock.withLock { listeners.removeValue(forKey: id) }
    }

    /// Whether the caller is to deliver: nobody else is, and something waits.
    private func takeDeliveryLocked() -> Bool {
        guard !isDelivering, !pending.isEmpty else { return false }
        isDelivering = true
        return true
    }

    /// Hands out `pending` in order, the lock released while yielding, until
    /// nothing waits (what other callers queue meanwhile included).
    private func deliverPending() {
        while true {
            // The listeners as they are now: one that left meanwhile gets nothing more.
            let (batch, current) = lock.withLock { () -> ([Delivery], [Int: AsyncStream<Element>.Continuation]) in
                let taken = pending
                pending = []
                if taken.isEmpty { isDelivering = false }
                return (taken, listeners)
            }
            guard !batch.isEmpty else { return }
            for delivery in batch {
                switch delivery {
                case .element(let element, let upTo):
                    for (id, continuation) in current where id <= upTo { continuation.yield(element) }
                case .early(let element, let continuation):
                    continuation.yield(element)
                case .finish(let one?):
                    one.finish()
                case .finish(nil):
                    let ended = lock.withLock { () -> [AsyncStream<Element>.Continuation] in
                        defer { listeners = [:] }
                        return Array(listeners.values)
                    }
                    for continuation in ended { continuation.finish() }
                }
            }
        }
    }
}
