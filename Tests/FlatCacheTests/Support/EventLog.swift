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

    /// Waits up to `seconds` (5 by default) for an event `matching` returns a value for.
    func first<T>(within seconds: Int = 5, _ matching: @escaping (Event) -> T?) async throws -> T {
        for _ in 0..<(seconds * 100) {
            if let found = all.lazy.compactMap(matching).first { return found }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("no such event in \(seconds) s; events: \(all)")
        throw CancellationError()
    }

    /// Waits up to `seconds` (5 by default) for `condition` to hold of the events.
    func wait(within seconds: Int = 5, until condition: @escaping ([Event]) -> Bool) async throws {
        for _ in 0..<(seconds * 100) {
            if condition(all) { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("condition not met in \(seconds) s; events: \(all)")
        throw CancellationError()
    }
}
