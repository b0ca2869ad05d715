import Foundation

/// Threads of FlatCache's own that run a ``BlockingWork/forEach(_:width:_:)``
/// call's indices beside its caller, kept parked between calls.
///
/// A flush fans out two or three times (stage, commit, and the `fsync`s of a
/// durable one). Starting threads for each fan-out cost about 60 µs a call on
/// the benchmark's machine, and a durable flush of 100 channels started 12
/// threads: more than a tenth of such a flush. A parked thread takes a few
/// microseconds to wake. A thread with nothing to do for
/// ``idleLifetime`` ends, so an app that flushed once does not keep them.
///
/// The caller always runs indices itself until none are left, so a call
/// finishes whether or not a helper is free: two calls at once (two caches,
/// or a call from inside a body) share the threads and never wait on each other.
final class WorkerThreads: @unchecked Sendable {
    /// The threads of the process.
    static let shared = WorkerThreads(limit: 8)

    /// How long a parked thread waits for work before it ends, in seconds.
    static let idleLifetime: TimeInterval = 10

    /// One call's indices, taken one at a time by its caller and the helpers that joined it.
    private final class Batch {
        let count: Int
        let body: @Sendable (Int) -> Void
        /// How many more helpers may join (the call's width less one, less those that did).
        var seats: Int
        /// The next index to hand out.
        var next = 0
        /// Indices whose body has returned.
        var finished = 0

        init(count: Int, seats: Int, body: @escaping @Sendable (Int) -> Void) {
            (self.count, self.seats, self.body) = (count, seats, body)
        }
    }

    // Lock rule (docs/reliability.md, "Liveness"): the condition's lock is held only to read or
    // change the fields below and the batches' counters; no body runs and no thread is started under it.
    private let condition = NSCondition()
    /// Calls with indices not yet handed out and seats left for helpers, oldest first.
    private var open = [Batch]()  // guarded by condition
    /// Threads alive, and how many of them are running a call's indices (the
    /// others are parked, or on their way to the next call or to park).
    private var alive = 0  // guarded by condition
    private var busy = 0  // guarded by condition
    /// Threads started since the process began: a test checks that calls reuse them.
    var started: Int { condition.withLock { startedCount } }
    private var startedCount = 0  // guarded by condition
    private let limit: Int

    /// - Parameter limit: The most threads kept at once, beside the callers.
    init(limit: Int) {
        self.limit = limit
    }

    /// Calls `body` for every index in `0..<count`, on the caller's thread and
    /// up to `width - 1` of these threads at once, and returns when all are done.
    func forEach(_ count: Int, width: Int, _ body: @escaping @Sendable (Int) -> Void) {
        guard count > 0 else { return }
        let batch = Batch(count: count, seats: max(0, min(width, count) - 1), body: body)
        condition.lock()
        open.append(batch)
        // Threads not running a call are woken; the seats they cannot fill, new threads take (up to the limit).
        let free = alive - busy
        let starting = max(0, min(batch.seats - free, limit - alive))
        alive += starting
        startedCount += starting
        if free > 0 { condition.broadcast() }
        condition.unlock()
        for _ in 0..<starting {
            let thread = Thread { [self] in work() }
            thread.name = "FlatCache worker"
            thread.start()
        }
        condition.lock()
        run(batch, helping: false)
        condition.lock()
        while batch.finished < batch.count { condition.wait() }
        condition.unlock()
    }

    /// Runs `batch`'s indices until none are left to hand out. Called
    /// holding the condition's lock, which it releases. A helper (`helping`)
    /// joins in the same hold of the lock that gave it its seat, and counts
    /// as free again in the hold that finds no index left, so that a caller
    /// who sees its call done sees its helpers free for the next.
    private func run(_ batch: Batch, helping: Bool) {
        var ran = false
        while true {
            if ran {
                batch.finished += 1
                if batch.finished == batch.count { condition.broadcast() }
            }
            guard batch.next < batch.count else { break }
            let index = batch.next
            batch.next += 1
            if batch.next == batch.count { open.removeAll { $0 === batch } }
            condition.unlock()
            #if canImport(Darwin)
            // A kept thread drains its own pool only when it ends: each body drains what it made.
            autoreleasepool { batch.body(index) }
            #else
            batch.body(index)
            #endif
            ran = true
            condition.lock()
        }
        if helping { busy -= 1 }
        condition.unlock()
    }

    /// A helper thread's life: join calls with seats left, park between them,
    /// and end after ``idleLifetime`` without any.
    private func work() {
        condition.lock()
        while true {
            if let batch = open.first(where: { $0.seats > 0 }) {
                batch.seats -= 1
                busy += 1
                run(batch, helping: true)
                condition.lock()
                continue
            }
            let woken = condition.wait(until: Date(timeIntervalSinceNow: Self.idleLifetime))
            if !woken, !open.contains(where: { $0.seats > 0 }) { break }
        }
        alive -= 1
        condition.unlock()
    }
}
