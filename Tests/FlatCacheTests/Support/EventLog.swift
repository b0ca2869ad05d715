import Foundation
import Testing

/// Collects the events of a stream as they come, so that a test can wait
/// for one (bounded in time) or check all of them.
final class EventLog<Event: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var events = [Event]()
    private var finished = false
    private var task: Task<Void, Never>?

    init(_ stream: AsyncStream<Event>) {
        task = Task { [weak self] in
            for await event in stream { self?.append(event) }
            self?.finish()
        }
    }

    deinit { task?.cancel() }

    private func append(_ event: Event) { lock.withLock { events.append(event) } }
    private func finish() { lock.withLock { finished = true } }

    /// Every event so far, in order.
    var all: [Event] { lock.withLock { events } }

    /// Whether the stream has finished.
    var isFinished: Bool { lock.withLock { finished } }

    /// Waits up to 5 seconds for an event `matching` returns a value for.
    func first<T>(_ matching: @escaping (Event) -> T?) async throws -> T {
        for _ in 0..<500 {
            if let found = all.lazy.compactMap(matching).first { return found }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("no such event in 5 s; events: \(all)")
        throw CancellationError()
    }

    /// Waits up to 5 seconds for `condition` to hold of the events.
    func wait(until condition: @escaping ([Event]) -> Bool) async throws {
        for _ in 0..<500 {
            if condition(all) { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("condition not met in 5 s; events: \(all)")
        throw CancellationError()
    }
}
