import Foundation

/// Work of which only the latest matters, run on a serial queue: work asked
/// while the last is still waiting to start takes its place, so that a burst
/// of asks costs one run (a search index saved after each of many changes:
/// one write, and one copy of the index held, not one per change).
final class LatestWork: @unchecked Sendable {
    private let queue: DispatchQueue
    private let lock = NSLock()
    private var waiting: (@Sendable () -> Void)?  // guarded by `lock`

    /// Work runs on `queue`, one at a time if it is serial.
    init(on queue: DispatchQueue) { self.queue = queue }

    /// Runs `work` on the queue, in place of the work asked before it if that has not started.
    func run(_ work: @escaping @Sendable () -> Void) {
        let start = lock.withLock {
            defer { waiting = work }
            return waiting == nil
        }
        // Nothing was waiting: a run is needed. Else the run already on the queue takes `work`.
        guard start else { return }
        queue.async { [self] in
            let latest = lock.withLock { () -> (@Sendable () -> Void)? in
                defer { waiting = nil }
                return waiting
            }
            latest?()
        }
    }
}
