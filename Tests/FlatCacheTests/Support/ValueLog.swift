import Foundation
import Testing

/// Collects the values of an observation stream as they come, on a task of
/// its own, until the stream ends or the log is let go.
final class ValueLog<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var values = [Value]()
    private var failure: (any Error)?
    private var task: Task<Void, Never>?

    init(_ stream: AsyncThrowingStream<Value, any Error>) {
        task = Task { [weak self] in
            do {
                for try await value in stream { self?.append(value) }
            } catch {
                self?.fail(error)
            }
        }
    }

    deinit { task?.cancel() }

    private func append(_ value: Value) { lock.withLock { values.append(value) } }
    private func fail(_ error: any Error) { lock.withLock { failure = error } }

    /// Every value so far, in order.
    var all: [Value] { lock.withLock { values } }
    /// What the stream threw, if it did.
    var error: (any Error)? { lock.withLock { failure } }

    /// Stops listening (cancels the task iterating the stream) and waits until it ended.
    func stop() async {
        task?.cancel()
        await task?.value
    }

    /// Waits up to `seconds` until the values so far satisfy `condition`.
    func wait(within seconds: Int = 60, until condition: ([Value]) -> Bool) async throws {
        for _ in 0..<(seconds * 200) {
            if condition(all) { return }
            try await Task.sleep(for: .milliseconds(5))
        }
        Issue.record("timed out; values: \(all)")
    }
}

/// Waits up to `seconds` until `condition` holds.
func waitUntil(within seconds: Int = 60, _ what: String, _ condition: () async -> Bool) async throws {
    for _ in 0..<(seconds * 200) {
        if await condition() { return }
        try await Task.sleep(for: .milliseconds(5))
    }
    Issue.record("timed out waiting until \(what)")
}
