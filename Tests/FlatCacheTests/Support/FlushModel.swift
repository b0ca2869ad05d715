import FlatCache

/// The messages each `flush-churn` channel holds, by the documented rules
/// alone: a save upserts (the last with an id wins), a replace makes its
/// messages the whole content, a change log upserts and deletes (and leaves
/// a channel never cached as it was when nothing is left), a removal leaves
/// no file; then the channel keeps its newest `limit` in canonical order
/// (creation time, then id). `nil`: never cached (no file).
///
/// The helper's channels never lose a message in a way that would let a
/// message a file keeps in its slack come back into the newest `limit`
/// (see `FlushChurn`), so what a load returns is this, exactly.
struct FlushModel {
    static let channelCount = 6

    static func url(_ channel: Int) -> String { "flush-channel-\(channel)" }

    /// The helper's only messages (`FlushChurn.message(channel:id:version:)`).
    static func message(channel: Int, id: Int64, version: Int64) -> ChatMessage {
        ChatMessage(
            messageID: id, channelURL: url(channel), createdAt: 1_000 * id,
            text: "channel \(channel) message \(id) version \(version)")
    }

    let limit: Int
    /// Each channel's messages at the start of a run: what the checker loaded after the last kill.
    var channels: [[ChatMessage]?]

    init(limit: Int) {
        self.limit = limit
        channels = Array(repeating: nil, count: Self.channelCount)
    }

    /// `state` after `operation`.
    func applying(_ operation: FlushReport.Operation, to state: [ChatMessage]?) -> [ChatMessage]? {
        let messages = operation.ids.map { Self.message(channel: operation.channel, id: $0, version: operation.version) }
        switch operation.kind {
        case .save: return newest(upserting(messages, into: state ?? []))
        case .replace: return newest(upserting(messages, into: []))
        case .log:
            let kept = newest(upserting(messages, into: state ?? []).filter { !operation.deleted.contains($0.messageID) })
            return state == nil && kept.isEmpty ? nil : kept
        case .remove: return nil
        }
    }

    /// For each channel, every content it may have on disk after the run
    /// `report` describes: first the one it had when the last `flush()`
    /// returned (or at the start), then the one after each later operation
    /// on it (write-behind may have written those before the kill).
    func allowedStates(after report: FlushReport) -> [[[ChatMessage]?]] {
        var states = channels
        for operation in report.operations[..<report.flushed] {
            states[operation.channel] = applying(operation, to: states[operation.channel])
        }
        var allowed = states.map { [$0] }
        for operation in report.operations[report.flushed...] {
            states[operation.channel] = applying(operation, to: states[operation.channel])
            allowed[operation.channel].append(states[operation.channel])
        }
        return allowed
    }

    private func upserting(_ incoming: [ChatMessage], into existing: [ChatMessage]) -> [ChatMessage] {
        var byID = [Int64: ChatMessage]()
        for message in existing + incoming { byID[message.messageID] = message }
        return Array(byID.values)
    }

    /// Canonical order, the newest `limit` only.
    private func newest(_ messages: [ChatMessage]) -> [ChatMessage] {
        Array(messages.sorted { ($0.createdAt, $0.messageID) < ($1.createdAt, $1.messageID) }.suffix(limit))
    }
}
