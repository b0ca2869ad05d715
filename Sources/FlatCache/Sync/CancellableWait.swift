import Foundation

/// Waits for a task that others may wait for too (a shared fetch), as long
/// as the waiting task is not cancelled: a cancelled waiter stops waiting at
/// once with `CancellationError`, and the task itself runs on for the others.
enum CancellableWait {
    /// The value of `task`, or `CancellationError` as soon as the waiting task is cancelled.
    static func value<T: Sendable>(of task: Task<T, any Error>) async throws -> T {
        try await result { finish in Task { finish(await task.result) } }
    }

    /// The result `start` reports through the function it is given (from any
    /// thread, once), or `CancellationError` as soon as the waiting task is
    /// cancelled; a report after that is dropped.
    static func result<T: Sendable>(
        _ start: (_ finish: @escaping @Sendable (Result<T, any Error>) -> Void) -> Void
    ) async throws -> T {
        let waiter = Waiter<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                waiter.start(continuation)
                start { result in waiter.finish(with: result) }
            }
        } onCancel: {
            waiter.finish(with: .failure(CancellationError()))
        }
    }

    /// Resumes its continuation once: with the task's result, or the cancellation, whichever comes first.
    private final class Waiter<T: Sendable>: @unchecked Sendable {
        // Lock rule (docs/reliability.md, "Liveness"): the continuation is taken out under the lock
        // and resumed after it is released (the cancellation handler takes it).
        private let lock = NSLock()
        // Guarded by `lock`.
        private var continuation: CheckedContinuation<T, any Error>?
        private var early: Result<T, any Error>?

        func start(_ continuation: CheckedContinuation<T, any Error>) {
            let result = lock.withLock { () -> Result<T, any Error>? in
                if early == nil { self.continuation = continuation }
                return early
            }
            if let result { continuation.resume(with: result) }
        }

        func finish(with result: Result<T, any Error>) {
            let waiting = lock.withLock { () -> CheckedContinuation<T, any Error>? in
                defer { continuation = nil }
                if continuation == nil, early == nil { early = result }
                return continuation
            }
            waiting?.resume(with: result)
        }
    }
}
