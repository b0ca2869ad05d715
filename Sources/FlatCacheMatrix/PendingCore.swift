// TEMPORARY: stand-ins for the outbox core (issue 23) until it lands on main; deleted at the merge.
public import FlatCache

public protocol MessageSender<Message>: Sendable {
    associatedtype Message: MessageRecord
    func send(_ message: Message, requestID: String) async throws -> Message
}

public enum SendFailure: Error, Sendable, Hashable {
    case offline(String)
    case rateLimited(retryAfter: Duration)
    case temporary(String)
    case refused(String)
}
