/// What an app implements over its chat server to send a message: the
/// other half of a ``MessageSource``, used by an ``OutboxDelivery``.
///
/// `SimulatedChatServer` (in `FlatCacheTesting`) implements it for tests and demos; `FlatCacheMatrix`'s
/// `MatrixSource` sends with `PUT /rooms/{roomId}/send/m.room.message/{txnId}`.
public protocol MessageSender<Message>: Sendable {
    /// The message record type the server returns.
    associatedtype Message: MessageRecord

    /// Sends `message` under the idempotency key `requestID` and returns the
    /// server's copy (its id, its time).
    ///
    /// Exactly once depends on the key: pass it to the server so that a
    /// send made again under the same key (its answer was lost, the app was
    /// killed while it was on its way) is answered with the message the
    /// server made the first time, and makes no second one. Let the server's
    /// copy carry the key as its ``MessageRecord/requestID`` when the server
    /// echoes it (as Matrix does with `unsigned.transaction_id`), so that the
    /// copy coming back by a live event or a page is matched to its entry.
    ///
    /// - Throws: A ``SendFailure`` that says whether retrying can help; any
    ///   other error counts as ``SendFailure/temporary(_:)``.
    func send(_ message: Message, requestID: String) async throws -> Message
}

/// Why a ``MessageSender`` could not send, and so what the ``OutboxDelivery`` does next.
public enum SendFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The server cannot be reached: the entry stays pending and is sent
    /// again when ``OutboxDelivery/resume()`` says the network is back, or
    /// after the backoff.
    case offline(String)
    /// The server asks to wait: the entry is sent again after `retryAfter`.
    case rateLimited(retryAfter: Duration)
    /// A failure that may pass (a server error, a timeout): the entry is sent
    /// again after the backoff.
    case temporary(String)
    /// The server refused the message for good (too long, not allowed): the
    /// entry becomes ``OutboxEntry/State/failed(reason:attempts:)`` and the
    /// channel's next entries are sent.
    case refused(String)

    /// Such as `offline: the network is down`.
    public var description: String {
        switch self {
        case .offline(let reason): "offline: \(reason)"
        case .rateLimited(let delay): "rate limited: retry after \(delay)"
        case .temporary(let reason): "temporary failure: \(reason)"
        case .refused(let reason): reason
        }
    }
}

/// How long an ``OutboxDelivery`` waits before sending again after a
/// failure that retrying can help: `initialDelay`, doubled after each
/// further failure in a row, at most `maximumDelay`.
public struct SendRetryPolicy: Sendable, Hashable {
    /// The wait after a first failure; 1 second by default.
    public var initialDelay: Duration
    /// The longest wait; 30 seconds by default.
    public var maximumDelay: Duration

    /// A policy with these waits.
    ///
    /// - Parameters:
    ///   - initialDelay: At least zero.
    ///   - maximumDelay: At least `initialDelay`.
    public init(initialDelay: Duration = .seconds(1), maximumDelay: Duration = .seconds(30)) {
        self.initialDelay = max(.zero, initialDelay)
        self.maximumDelay = max(self.initialDelay, maximumDelay)
    }

    /// The wait after `failures` failures in a row (at least 1).
    func delay(afterFailures failures: Int) -> Duration {
        var delay = initialDelay
        for _ in 1..<max(1, min(failures, 40)) where delay < maximumDelay { delay *= 2 }
        return min(delay, maximumDelay)
    }
}
