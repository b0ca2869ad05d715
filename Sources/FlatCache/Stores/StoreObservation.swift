import Foundation

/// A store's value as a sequence: the value now, then again after each
/// change to its file (GRDB's `ValueObservation` model), for one listener.
///
/// Changes come from the folder's ``ChangeHub``, so a change made through
/// any store of any ``ChatCache`` on the folder in this process wakes it.
/// Several changes before the listener reads again make one read (it always
/// ends at the latest value), and a value equal to the last one delivered
/// (the same bytes, record by record) is not delivered again. Values are
/// read as the store's `async` loads read them: from memory, else on the
/// engine's threads, never blocking a cooperative-pool thread.
enum StoreObservation {
    /// The stream of `read`'s values for the file at `path`: the listener
    /// leaves the hub when its task is cancelled, its loop ends, or `read` throws.
    static func values<R: CacheRecord>(
        of path: String, in hub: ChangeHub, read: @escaping @Sendable () async throws(FlatCacheError) -> [R]
    ) -> AsyncThrowingStream<[R], any Error> {
        let observer = StoreObserver(hub: hub, signal: hub.listen(to: path), read: read)
        return AsyncThrowingStream { try await observer.next() }
    }

    /// A stream that throws `error` at once (a channel URL that names no file).
    static func failing<R>(_ error: FlatCacheError) -> AsyncThrowingStream<[R], any Error> {
        AsyncThrowingStream { $0.finish(throwing: error) }
    }

    /// Whether two lists hold the same records in the same order, by their bytes.
    static func same<R: CacheRecord>(_ first: [R], _ second: [R]) -> Bool {
        guard first.count == second.count else { return false }
        let same = sameness(of: R.self)
        for index in first.indices where !same(first[index], second[index]) { return false }
        return true
    }

    /// How to tell whether two records of type `R` have the same bytes:
    /// `==` for the built-in models (no serializing), else ``sameBytes(_:_:)``.
    static func sameness<R: CacheRecord>(of type: R.Type) -> (R, R) -> Bool {
        if let known = type as? any EqualWhenSameBytes.Type, let equal = known.equality as? (R, R) -> Bool { return equal }
        return sameBytes
    }

    /// Whether two records serialize to the same bytes (one that cannot serialize differs).
    static func sameBytes<R: CacheRecord>(_ first: R, _ second: R) -> Bool {
        guard let one = try? first.serialize(), let other = try? second.serialize() else { return false }
        return one == other
    }
}

/// A record whose `==` holds exactly when its bytes are equal: the built-in
/// models (`==` synthesized over every field, each one serialized). An app's
/// record may define `==` otherwise (an SDK object equal by id alone), so
/// only these skip serializing when compared.
protocol EqualWhenSameBytes: Equatable {}

extension EqualWhenSameBytes {
    /// `==` as a `(Self, Self) -> Bool`, type-erased for a generic caller to cast back.
    static var equality: Any { { (first: Self, second: Self) in first == second } as (Self, Self) -> Bool }
}

extension ChatMessage: EqualWhenSameBytes {}
extension ChatChannel: EqualWhenSameBytes {}
extension ChatUser: EqualWhenSameBytes {}

/// One listener of a ``StoreObservation``: its signal in the hub, and the
/// last value it delivered. Let go (the stream's loop ended), it leaves the hub.
final class StoreObserver<R: CacheRecord>: @unchecked Sendable {
    private let hub: ChangeHub
    private let signal: ChangeSignal
    private let read: @Sendable () async throws(FlatCacheError) -> [R]
    // Lock rule (docs/reliability.md, "Liveness"): held only to read or change the fields it guards;
    // nothing is resumed, yielded or called out while it is held.
    private let lock = NSLock()
    // Guarded by `lock`; only one `next()` runs at a time (the stream's iterator calls it).
    private var last: [R]?
    private var ended = false

    init(hub: ChangeHub, signal: ChangeSignal, read: @escaping @Sendable () async throws(FlatCacheError) -> [R]) {
        self.hub = hub
        self.signal = signal
        self.read = read
    }

    deinit { hub.remove(signal) }

    /// The next value unlike the last delivered, once a change comes; `nil`
    /// when the task is cancelled (the stream then ends).
    func next() async throws -> [R]? {
        while !lock.withLock({ ended }), await signal.wait() {
            let value: [R]
            do {
                value = try await read()
            } catch {
                end()
                throw error
            }
            if let previous = lock.withLock({ last }), StoreObservation.same(previous, value) { continue }
            lock.withLock { last = value }
            return value
        }
        end()
        return nil
    }

    /// Leaves the hub now, not when the stream is let go.
    private func end() {
        lock.withLock { ended = true }
        hub.remove(signal)
    }
}
