import Foundation

/// Times the calls a liveness round cancels (from the cancel to their end)
/// and the calls it makes after its cancel storm (from their start to their
/// answer), and watches from a thread of its own — not the cooperative pool,
/// which a deadlock may fill — that each ends within ``bound``.
///
/// A call past its bound is a hang: the watcher prints `stuck <call> ...` on
/// standard output (the test then takes every thread's stack), waits
/// ``holdSeconds`` for a debugger, and exits 1.
final class LivenessStopwatch: @unchecked Sendable {
    /// How long a cancelled call may take to end, and an answer to come.
    let bound: Duration
    /// How long a stuck process stays alive for a debugger before it exits.
    let holdSeconds: Double
    private let clock = ContinuousClock()
    private let lock = NSLock()
    // Guarded by `lock`.
    private var open = [Int: (name: String, since: ContinuousClock.Instant, cancelled: Bool)]()
    private var nextID = 0
    private var totals = Totals()

    /// What the campaign measured so far.
    struct Totals {
        /// Calls and loops cancelled.
        var cancels = 0
        /// Of them, those still running when cancelled (the others had ended).
        var runningAtCancel = 0
        /// The longest time from a cancel to the end of its call, and which call.
        var slowestEnd = Duration.zero
        var slowestEndName = "-"
        /// Calls made after a storm, and the longest wait for one's answer.
        var answers = 0
        var slowestAnswer = Duration.zero
        var slowestAnswerName = "-"

        static func milliseconds(_ duration: Duration) -> String {
            String(format: "%.1f", Double(duration.components.seconds) * 1_000 + Double(duration.components.attoseconds) / 1e15)
        }
    }

    init(bound: Duration, holdSeconds: Double = 30) {
        self.bound = bound
        self.holdSeconds = holdSeconds
    }

    var snapshot: Totals { lock.withLock { totals } }

    // MARK: - Calls cancelled at random moments

    /// Runs `body` in a task of its own, cancels the task after `delay`, and
    /// waits until it ended; the time from the cancel to the end counts
    /// against the bound. Returns how the call ended, and whether it had ended before its cancel.
    @discardableResult
    func cancel(
        _ name: String, after delay: Duration, _ body: @escaping @Sendable () async throws -> Void
    ) async -> (result: Result<Void, any Error>, endedBeforeCancel: Bool) {
        let finished = Flag()
        let task = Task {
            defer { finished.set() }
            try await body()
        }
        if delay > .zero { try? await Task.sleep(for: delay) } else { await Task.yield() }
        let endedBefore = finished.isSet
        let id = begin(name, cancelled: true)
        task.cancel()
        let result = await task.result
        end(id, endedBeforeCancel: endedBefore)
        return (result, endedBefore)
    }

    // MARK: - Calls that must answer

    /// Runs `body` (not cancelled) in the caller's isolation: it must answer within the bound.
    func answer<T>(
        _ name: String, isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T
    ) async rethrows -> T {
        let id = begin(name, cancelled: false)
        defer { end(id, endedBeforeCancel: false) }
        return try await body()
    }

    private func begin(_ name: String, cancelled: Bool) -> Int {
        let now = clock.now
        return lock.withLock {
            nextID += 1
            open[nextID] = (name, now, cancelled)
            return nextID
        }
    }

    private func end(_ id: Int, endedBeforeCancel: Bool) {
        let now = clock.now
        lock.withLock {
            guard let call = open.removeValue(forKey: id) else { return }
            let took = now - call.since
            if call.cancelled {
                totals.cancels += 1
                if !endedBeforeCancel { totals.runningAtCancel += 1 }
                if took > totals.slowestEnd { (totals.slowestEnd, totals.slowestEndName) = (took, call.name) }
            } else {
                totals.answers += 1
                if took > totals.slowestAnswer { (totals.slowestAnswer, totals.slowestAnswerName) = (took, call.name) }
            }
        }
    }

    // MARK: - The watcher

    /// Starts the thread that checks, every 50 ms, that no call is past its bound.
    func startWatching() {
        let thread = Thread { [self] in
            while true {
                Thread.sleep(forTimeInterval: 0.05)
                let now = clock.now
                let late = lock.withLock { open.values.filter { now - $0.since > bound } }
                guard let call = late.min(by: { $0.since < $1.since }) else { continue }
                let what = call.cancelled ? "did not end" : "did not answer"
                let since = call.cancelled ? "its cancel" : "its call"
                Liveness.say(
                    "stuck \(call.name): \(what) \(Totals.milliseconds(now - call.since)) ms after \(since) "
                        + "(bound \(Totals.milliseconds(bound)) ms; \(late.count) calls late)")
                FileHandle.standardError.write(Data("liveness: \(call.name) \(what) within the bound after \(since)\n".utf8))
                Thread.sleep(forTimeInterval: holdSeconds)
                exit(1)
            }
        }
        thread.name = "liveness watcher"
        thread.start()
    }
}

/// A number that goes up by one at each ``next()``, from any thread.
final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0  // guarded by lock

    func next() -> Int {
        lock.withLock {
            value += 1
            return value
        }
    }
}

/// A flag set once, read from any thread.
final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false  // guarded by lock

    func set() { lock.withLock { value = true } }
    var isSet: Bool { lock.withLock { value } }
}
