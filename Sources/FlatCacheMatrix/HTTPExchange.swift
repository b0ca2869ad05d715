import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One HTTP request and its answer over `URLSession`, that always ends: at
/// its answer, at its deadline, or at once when the calling task is cancelled.
///
/// Why not `URLSession.data(for:)`: on Linux, cancelling the Swift task that
/// awaits it while its answer arrives can deadlock inside
/// swift-corelibs-foundation (issue #5412, fixed after Swift 6.3.1). The
/// task's cancellation handler runs under the task's status lock and calls
/// `URLSessionTask.cancel()`, which waits for URLSession's work queue, while
/// the work queue, delivering the answer, resumes the task and waits for
/// that status lock. Here the cancellation handler takes no URLSession lock:
/// it resumes the caller with `CancellationError` at once and leaves
/// `URLSessionTask.cancel()` to a serial queue of its own, which holds no
/// task's lock. Measured with `flatcache-test-helper cancel-storm` (200 long
/// polls held by a local server, then answered and cancelled at the same
/// moments; 5 rounds a run, 10 runs, Swift 6.3.1 on 2 cores):
/// `data(for:)` deadlocked in 10 of 10 runs, each in its first round; this
/// exchange in 0 of 10 (50 rounds, 10,000 cancellations, about 3 s a run).
/// One request a round, 200 rounds a run, 5 runs: `data(for:)` deadlocked
/// in every run, after 0, 2, 0, 7 and 0 rounds; this exchange finished all 1,000.
/// A Foundation workaround was preferred to another HTTP stack: it keeps
/// URLSession's proxies, TLS and configuration, and adds no dependency.
///
/// Why a deadline of its own: URLSession's `timeoutInterval` is an idle
/// timeout (it restarts with each byte that comes): a server trickling a byte
/// a second held a request whose `timeoutInterval` was 3 s for 30.1 s, until
/// its whole body had come. The deadline ends the
/// exchange with `URLError(.timedOut)` after `timeout` seconds whatever the server does.
enum HTTPExchange {
    /// Where `URLSessionTask.cancel()` runs: never on a thread that cancels a Swift task.
    private static let cancelQueue = DispatchQueue(label: "FlatCacheMatrix.HTTPExchange.cancel")

    /// The answer to `request`, within `timeout` seconds.
    ///
    /// - Throws: `CancellationError` as soon as the task is cancelled;
    ///   `URLError(.timedOut)` at the deadline; URLSession's error otherwise.
    static func data(for request: URLRequest, in session: URLSession, timeout: Double) async throws -> (Data, URLResponse) {
        let pending = Pending()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<(Data, URLResponse), any Error>) in
                let task = session.dataTask(with: request) { data, response, error in
                    if let error {
                        pending.finish(.failure(error))
                    } else if let response {
                        pending.finish(.success((data ?? Data(), response)))
                    } else {
                        pending.finish(.failure(URLError(.badServerResponse)))
                    }
                }
                guard pending.start(continuation, task: task) else { return }
                let deadline = DispatchWorkItem { pending.finish(.failure(URLError(.timedOut))) }
                pending.setDeadline(deadline)
                cancelQueue.asyncAfter(deadline: .now() + max(timeout, 0.001), execute: deadline)
                task.resume()
            }
        } onCancel: {
            pending.finish(.failure(CancellationError()))
        }
    }

    /// Resumes its continuation exactly once (answer, deadline or
    /// cancellation, whichever comes first), then cancels the URLSession
    /// task and the deadline on ``cancelQueue``. Nothing is resumed or
    /// called out while `lock` is held.
    private final class Pending: @unchecked Sendable {
        private let lock = NSLock()
        // Guarded by `lock`.
        private var continuation: CheckedContinuation<(Data, URLResponse), any Error>?
        private var task: URLSessionDataTask?
        private var deadline: DispatchWorkItem?
        private var ended: Result<(Data, URLResponse), any Error>?

        /// Holds `continuation` and `task`; `false` (the continuation
        /// resumed already) when the exchange ended before it started.
        func start(_ continuation: CheckedContinuation<(Data, URLResponse), any Error>, task: URLSessionDataTask) -> Bool {
            let early = lock.withLock { () -> Result<(Data, URLResponse), any Error>? in
                if ended == nil {
                    self.continuation = continuation
                    self.task = task
                }
                return ended
            }
            guard let early else { return true }
            continuation.resume(with: early)
            return false
        }

        func setDeadline(_ item: DispatchWorkItem) {
            let cancelled = lock.withLock { () -> Bool in
                if ended == nil { deadline = item }
                return ended != nil
            }
            if cancelled { item.cancel() }
        }

        /// Ends the exchange with `result` unless it ended already.
        func finish(_ result: Result<(Data, URLResponse), any Error>) {
            let taken = lock.withLock { () -> (CheckedContinuation<(Data, URLResponse), any Error>?, URLSessionDataTask?, DispatchWorkItem?)? in
                guard ended == nil else { return nil }
                ended = result
                defer { (continuation, task, deadline) = (nil, nil, nil) }
                return (continuation, task, deadline)
            }
            guard let (continuation, task, deadline) = taken else { return }
            continuation?.resume(with: result)
            deadline?.cancel()
            // A task still running (cancelled, or past its deadline) is cancelled later, off this thread.
            if let task, case .failure = result { HTTPExchange.cancelQueue.async { task.cancel() } }
        }
    }
}
