public import FlatCache
import Foundation

/// Sending: the outbox's `MessageSender`.
///
/// A message goes out as `PUT /rooms/{roomId}/send/m.room.message/{txnId}`
/// with the outbox entry's request id as the transaction id. The homeserver
/// remembers the transaction ids of each device (access token): sending the
/// same one again answers the event it made the first time and makes no
/// second one, so a send whose answer was lost is retried safely. The echo
/// of the message (in `/sync`, `/messages`, `/event`) carries the same id in
/// `unsigned.transaction_id` for the access token that sent it, which
/// ``MatrixEvent/message(in:)`` puts in ``MatrixMessage/requestID``.
///
/// How failures map onto `SendFailure` (see ``sendFailure(for:)``):
/// - The server did not answer (connection refused, reset, timed out): `offline`.
/// - `M_LIMIT_EXCEEDED` or 429: `rateLimited`, after the server's `retry_after_ms`
///   (one second when it says none). The send itself is not retried by the
///   client: the outbox waits the delay out.
/// - 5xx, 408, or an answer that is not the JSON the API promises: `temporary`.
/// - Any other 4xx (`M_FORBIDDEN`, `M_TOO_LARGE`, `M_NOT_FOUND`, `M_UNKNOWN`…): `refused`.
/// - An access token the server refuses with `soft_logout: true`: `offline`. A soft
///   logout means "log in again as the same device": nothing is wrong with the
///   message, the device (and the transaction ids it remembers) stays, so the
///   entry stays pending and a process with the renewed token sends it. Without
///   `soft_logout` the device is gone for good: `refused` (the entry is failed,
///   and `Outbox/retry(_:with:)` sends it after logging in again).
extension MatrixSource: MessageSender {
    /// Sends `message`'s text to its room with `requestID` as the transaction
    /// id, and returns the server's copy: the event id it made, its sender and
    /// `origin_server_ts` (read back with `GET /rooms/{roomId}/event/{eventId}`),
    /// and `requestID`. Sending a request id again returns the same event.
    ///
    /// The content is `{"msgtype": message.msgtype, "body": message.body}`;
    /// an empty `msgtype` is sent as `m.text`.
    ///
    /// - Parameters:
    ///   - message: The message to send: its ``MatrixMessage/roomID``, ``MatrixMessage/msgtype``
    ///     and ``MatrixMessage/body`` are read; its event id is not (it has none yet).
    ///   - requestID: The idempotency key: the transaction id.
    /// - Returns: The server's copy of the message.
    /// - Throws: `SendFailure` (see the extension's description).
    public func send(_ message: MatrixMessage, requestID: String) async throws -> MatrixMessage {
        do {
            return try await sendMessage(message, requestID: requestID)
        } catch {
            throw Self.sendFailure(for: error)
        }
    }

    /// ``send(_:requestID:)`` with the errors as ``MatrixError``.
    func sendMessage(_ message: MatrixMessage, requestID: String) async throws(MatrixError) -> MatrixMessage {
        let roomID = message.roomID
        guard !roomID.isEmpty else { throw .invalidArgument("the message has no room id") }
        guard !requestID.isEmpty else { throw .invalidArgument("the request id (transaction id) is empty") }
        var client = self.client
        client.maxRateLimitRetries = 0  // the outbox waits a rate limit out, not this call
        let content = MessageContent(msgtype: message.msgtype.isEmpty ? "m.text" : message.msgtype, body: message.body)
        let sent: SendResponse = try await client.put(["rooms", roomID, "send", "m.room.message", requestID], body: content)
        guard !sent.eventID.isEmpty else {
            throw .invalidResponse(url: "/rooms/\(roomID)/send", reason: "no event_id")
        }
        // The answer holds only the event id: the server's time comes from the event.
        let event: MatrixEvent
        do {
            event = try await client.get(["rooms", roomID, "event", sent.eventID])
        } catch .server(let status, _, _) where (400..<500).contains(status) && status != 408 && status != 429 {
            // Sent, but not readable back (redacted at once, say): the message as queued, with its event id.
            var copy = message
            copy.eventID = sent.eventID
            copy.requestID = requestID
            return copy
        }
        var copy = event.message(in: roomID) ?? MatrixMessage(
            eventID: sent.eventID, roomID: roomID, sender: event.sender.isEmpty ? message.sender : event.sender,
            createdAt: event.originServerTS, msgtype: content.msgtype, body: message.body)
        copy.eventID = sent.eventID
        copy.requestID = requestID
        return copy
    }

    /// What a failed send means to the outbox (see the extension's description).
    ///
    /// - Parameter error: What the send threw.
    /// - Returns: Whether, and when, retrying can help, with the error's description.
    public static func sendFailure(for error: MatrixError) -> SendFailure {
        let reason = error.description
        switch error {
        case .unreachable: return .offline(reason)
        case .rateLimited(let milliseconds): return .rateLimited(retryAfter: .milliseconds(max(milliseconds ?? 1_000, 0)))
        case .server(429, _, _), .server(_, "M_LIMIT_EXCEEDED", _): return .rateLimited(retryAfter: .seconds(1))
        case .server(let status, _, _) where status >= 500 || status == 408: return .temporary(reason)
        case .server: return .refused(reason)
        case .unknownToken(softLogout: true): return .offline(reason)
        case .unknownToken(softLogout: false): return .refused(reason)
        case .invalidResponse: return .temporary(reason)
        case .invalidArgument: return .refused(reason)
        }
    }
}

/// An `m.room.message`'s content as sent.
private struct MessageContent: Encodable {
    var msgtype: String
    var body: String
}
