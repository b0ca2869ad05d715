import Foundation

/// Runs blocking work (file I/O, lock waits) away from Swift's cooperative
/// thread pool, so that an `async` call never holds one of its few threads.
enum BlockingWork {
    /// Runs `work` on `queue` and resumes the caller with its result.
    static func run<T: Sendable>(
        on queue: DispatchQueue, _ work: @escaping @Sendable () throws(FlatCacheError) -> T
    ) async throws(FlatCacheError) -> T {
        let result: Result<T, FlatCacheError> = await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: Result { () throws(FlatCacheError) in try work() }) }
        }
        return try result.get()
    }

    /// Calls `body` for every index in `0..<count`, on up to `width` threads
    /// at once, and returns when all are done. Threads of its own, not a
    /// pool's: the body may block (an `fsync` waits for the disk), and waits
    /// overlap, which is how several `fsync`s cost little more than one.
    static func forEach(_ count: Int, width: Int, _ body: @escaping @Sendable (Int) -> Void) {
        let threads = min(width, count)
        guard threads > 1 else {
            for index in 0..<count { body(index) }
            return
        }
        // Escaping: a finished thread may let go of its closure only after the wait below returns.
        let next = Counter()
        let group = DispatchGroup()
        for _ in 0..<threads {
            group.enter()
            let thread = Thread {
                while let index = next.take(below: count) { body(index) }
                group.leave()
            }
            thread.start()
        }
        group.wait()
    }

    /// Hands out indices, each once.
    private final class Counter: @unchecked Sendable {
        // Lock rule: held only to read or change `value`; nothing is called out under it.
        private let lock = NSLock()
        private var value = 0  // guarded by lock

        func take(below count: Int) -> Int? {
            lock.withLock {
                guard value < count else { return nil }
                defer { value += 1 }
                return value
            }
        }
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
