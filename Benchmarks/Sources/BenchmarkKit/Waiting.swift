import Foundation

/// Runs `body` in a task and blocks the calling thread until it ends: how
/// the benchmark's synchronous timing loop drives an `async` API. The
/// calling thread is the benchmark's own, never a cooperative-pool thread.
package func waiting<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let box = ResultBox<T>()
    Task {
        do { box.result = .success(try await body()) } catch { box.result = .failure(error) }
        box.done.signal()
    }
    box.done.wait()
    return try box.result!.get()
}

/// Where `waiting` leaves the task's result; the semaphore orders the accesses.
private final class ResultBox<T>: @unchecked Sendable {
    var result: Result<T, any Error>?
    let done = DispatchSemaphore(value: 0)
}
