import Foundation

/// Runs blocking work (file I/O, lock waits) away from Swift's cooperative
/// thread pool, so that an `async` call never holds one of its few threads.
enum BlockingWork {
    /// Runs `work` on `queue` and resumes the caller with its result.
    static func run<T: Sendable>(
        on queue: DispatchQueue, _ work: @escaping @Sendable () throws(FlatCacheError) -> T
    ) async throws(FlatCacheError) -> T {
        try await result(on: queue, work).get()
    }

    /// Runs `work` on `queue` and resumes the caller with its result, thrown or returned.
    static func result<T: Sendable>(
        on queue: DispatchQueue, _ work: @escaping @Sendable () throws(FlatCacheError) -> T
    ) async -> Result<T, FlatCacheError> {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: Result { () throws(FlatCacheError) in try work() }) }
        }
    }

    /// The processors this process may use, asked once: asking reads the control group's files
    /// each time on Linux (an `open` and a read per flush).
    static let processorCount = ProcessInfo.processInfo.activeProcessorCount

    /// Calls `body` for every index in `0..<count`, on up to `width` threads
    /// at once (the caller's among them), and returns when all are done.
    /// Threads of FlatCache's own (``WorkerThreads``), not a pool's: the body
    /// may block (an `fsync` waits for the disk), and waits overlap, which is
    /// how several `fsync`s cost little more than one.
    static func forEach(_ count: Int, width: Int, _ body: @escaping @Sendable (Int) -> Void) {
        guard min(width, count) > 1 else {
            for index in 0..<count { body(index) }
            return
        }
        WorkerThreads.shared.forEach(count, width: width, body)
    }
}

/// Slots filled from several threads, each slot by one: a result per index of a ``BlockingWork/forEach(_:width:_:)``.
final class Slots<Element>: @unchecked Sendable {
    // Lock rule: held only to read or change one slot; nothing is called out under it.
    private let lock = NSLock()
    private var elements: [Element]  // guarded by lock

    init(repeating element: Element, count: Int) {
        elements = Array(repeating: element, count: count)
    }

    init(_ elements: [Element]) {
        self.elements = elements
    }

    subscript(index: Int) -> Element {
        get { lock.withLock { elements[index] } }
        set { lock.withLock { elements[index] = newValue } }
    }

    var all: [Element] { lock.withLock { elements } }
}
