public import FlatCache

/// ``SimulatedChatServer`` as a `MessageSender`, and the failures a test scripts for it.
extension SimulatedChatServer {
    /// The send failures scripted to come, each for the next sends in order.
    struct SendScript: Sendable {
        var answersToDrop = 0
        var refusals = [String]()
        var rateLimits = [Duration]()
    }

    /// Makes `message` a message of the server (the next id, the server's
    /// time, `requestID` as its `ChatMessage/requestID`), sent like
    /// ``send(_:)`` (a change and a live event), and returns it. A request id
    /// the server already acted on returns the message it made then, as it
    /// is now, and makes nothing new.
    ///
    /// - Throws: `SendFailure/offline(_:)` while offline or when the answer
    ///   is scripted to be lost (``dropNextAnswers(_:)``: the message is made
    ///   first); `SendFailure/temporary(_:)` for ``failNextCalls(_:)``;
    ///   `SendFailure/refused(_:)` and `SendFailure/rateLimited(retryAfter:)` as scripted.
    public func send(_ message: ChatMessage, requestID: String) async throws -> ChatMessage {
        do {
            try await answer(.send(channelURL: message.channelURL, requestID: requestID))
        } catch Failure.offline {
            throw SendFailure.offline(Failure.offline.description)
        } catch let failure as Failure {
            throw SendFailure.temporary(failure.description)
        }
        if !sendScript.refusals.isEmpty { throw SendFailure.refused(sendScript.refusals.removeFirst()) }
        if !sendScript.rateLimits.isEmpty { throw SendFailure.rateLimited(retryAfter: sendScript.rateLimits.removeFirst()) }
        let made: ChatMessage
        if let earlier = sentByRequestID[requestID] {
            made = messages(in: earlier.channelURL).first { $0.messageID == earlier.messageID } ?? earlier
        } else {
            var copy = message
            copy.messageID = highestMessageID + 1
            copy.requestID = requestID
            copy.createdAt = max(clock.milliseconds, messages(in: message.channelURL).last?.createdAt ?? 0)
            sentByRequestID[requestID] = copy
            send([copy])
            made = copy
        }
        if sendScript.answersToDrop > 0 {
            sendScript.answersToDrop -= 1
            throw SendFailure.offline("the simulated server made the message, but its answer was lost")
        }
        return made
    }

    /// Makes the next `count` sends act (make the message) and then lose
    /// their answer, as a connection dropped after the server acted.
    public func dropNextAnswers(_ count: Int) {
        sendScript.answersToDrop = max(0, count)
    }

    /// Makes the next `count` sends refuse their message for good with `reason`.
    public func refuseNextSends(_ count: Int, reason: String = "the simulated server refused the message") {
        sendScript.refusals = Array(repeating: reason, count: max(0, count))
    }

    /// Makes the next `count` sends answer with a rate limit of `retryAfter`.
    public func rateLimitNextSends(_ count: Int, retryAfter: Duration) {
        sendScript.rateLimits = Array(repeating: retryAfter, count: max(0, count))
    }

    /// Makes ``send(_:requestID:)`` take the time of the messages it makes
    /// from `clock` (the system clock by default); a message is never older
    /// than the channel's newest.
    public func setClock(_ clock: CacheClock) {
        self.clock = clock
    }

    /// How many messages of `channelURL` the server holds with `requestID`:
    /// 1 when a message queued once was made once.
    public func count(of requestID: String, in channelURL: String) -> Int {
        messages(in: channelURL).count { $0.requestID == requestID }
    }
}
