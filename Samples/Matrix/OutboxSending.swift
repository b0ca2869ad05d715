import FlatCache
import FlatCacheMatrix
import Foundation

/// The outbox's send loop for the tool: an ``OutboxDelivery`` with the
/// account's ``MatrixSource`` as sender, printing a line per outbox event.
actor OutboxSending {
    private let cache: MatrixCache
    private let delivery: OutboxDelivery<MatrixSource>
    private var printer: Task<Void, Never>?
    private var sent = 0
    private var failed = 0

    init(cache: MatrixCache, source: MatrixSource) {
        self.cache = cache
        delivery = OutboxDelivery(outbox: cache.outbox, sender: source, store: cache.messages)
    }

    /// Starts sending what the outbox holds (and what is queued later).
    func start() async {
        let events = cache.outbox.events()
        printer = Task { [weak self] in
            for await event in events {
                guard let self else { return }
                await self.describe(event)
            }
        }
        await delivery.start()
    }

    /// Waits until nothing is pending or sending, `limit` at most, then says
    /// what is left. Returns whether the outbox was sent (failed entries aside).
    @discardableResult
    func waitUntilSent(within limit: Duration) async -> Bool {
        let pending = (try? await cache.outbox.entries()) ?? []
        guard !pending.isEmpty else { return true }
        let done = await Self.waitUntilSent(delivery, within: limit)
        let left = (try? await cache.outbox.entries()) ?? []
        let queued = left.filter { if case .failed = $0.state { false } else { true } }
        if !queued.isEmpty {
            let reason = queued.compactMap(\.lastFailure).last.map { " (\($0))" } ?? ""
            print("outbox: \(queued.count) still queued after \(limit.formatted(.units(allowed: [.seconds], width: .wide)))\(reason); the next sync sends \(queued.count == 1 ? "it" : "them")")
        }
        return done && queued.isEmpty
    }

    /// Stops sending; what is left stays queued in the folder.
    func stop() async {
        await delivery.stop()
        printer?.cancel()
        printer = nil
    }

    private func describe(_ event: OutboxEvent<MatrixMessage>) {
        switch event {
        case .queued(let entry):
            print("\(entry.channelURL)  queued \(entry.requestID): \(entry.message.body)")
        case .changed(let entry):
            if case .failed(let reason, let attempts) = entry.state {
                failed += 1
                print("\(entry.channelURL)  failed after \(attempts) attempt\(attempts == 1 ? "" : "s"): \(entry.message.body) (\(reason))")
            }
        case .confirmed(let entry, let message):
            sent += 1
            print("\(entry.channelURL)  sent \(message.eventID): \(message.body)")
        case .cancelled(let entry):
            print("\(entry.channelURL)  cancelled \(entry.requestID): \(entry.message.body)")
        }
    }

    /// Whether `delivery` sent everything within `limit` (the wait is cancelled at the limit).
    private static func waitUntilSent(_ delivery: OutboxDelivery<MatrixSource>, within limit: Duration) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask { (try? await delivery.waitUntilSent()) != nil }
            group.addTask {
                try? await Task.sleep(for: limit)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }
}
