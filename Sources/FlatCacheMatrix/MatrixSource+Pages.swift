import FlatCache

/// Pages around a time: the timestamp API finds where to start, `/messages` walks.
extension MatrixSource {
    /// The `/messages` filter: only message events (edits and redacted messages are left out here).
    static let messageFilter = #"{"types":["m.room.message"],"lazy_load_members":true}"#
    /// Times past this (the year 2100) mean "after every event".
    private static let farFuture: Int64 = 4_102_444_800_000

    /// Where a walk through `/messages` starts.
    private enum WalkStart {
        /// From the timeline's newest event (walking back) or oldest (walking forward).
        case timelineEdge
        /// From this token.
        case token(String)
        /// Nowhere: no event lies that way.
        case nothing
    }

    func page(in roomID: String, _ direction: PageDirection, _ timestamp: Int64, limit: Int) async throws(MatrixError)
        -> MessagePage<MatrixMessage>
    {
        guard !roomID.isEmpty else { throw .invalidArgument("the room id is empty") }
        guard limit >= 1 else { throw .invalidArgument("the page limit is \(limit); it must be 1 or more") }
        // The walk starts a little beyond the time, so that messages sharing a
        // millisecond, or out of order by a skewed clock, are all met.
        let keep: (Int64) -> Bool = direction == .before ? { $0 < timestamp } : { $0 > timestamp }
        let near = direction == .before
            ? timestamp.addingReportingOverflow(timestampSlack)
            : timestamp.subtractingReportingOverflow(timestampSlack)
        var from: String?
        switch try await walkStart(in: roomID, near: near.overflow ? (direction == .before ? .max : .min) : near.partialValue, direction) {
        case .nothing: return MessagePage(messages: [], hasMore: false)
        case .timelineEdge: from = nil
        case .token(let token): from = token
        }
        // One more than asked for says whether more exist; 20 more cover the
        // slack's messages, edits and redacted ones, so one request usually does.
        var found = [MatrixMessage]()
        let batch = String(min(limit + 21, 1_000))
        for _ in 0..<maxRequestsPerCall {
            var query = [("dir", direction == .before ? "b" : "f"), ("limit", batch), ("filter", Self.messageFilter)]
            if let from { query.append(("from", from)) }
            let response: MessagesResponse = try await client.get(["rooms", roomID, "messages"], query: query)
            for event in response.chunk {
                if let message = event.message(in: roomID), keep(message.createdAt) { found.append(message) }
            }
            guard found.count <= limit, let end = response.end, !response.chunk.isEmpty else { break }
            from = end
        }
        let page = Array(found.prefix(limit))
        return MessagePage(messages: direction == .before ? page.reversed() : page, hasMore: found.count > limit)
    }

    /// Where to walk from toward `direction`, starting at the event nearest `time`.
    private func walkStart(in roomID: String, near time: Int64, _ direction: PageDirection) async throws(MatrixError) -> WalkStart {
        switch direction {
        case .before where time >= Self.farFuture: return .timelineEdge
        case .before where time <= 0: return .nothing
        case .after where time <= 0: return .timelineEdge
        case .after where time >= Self.farFuture: return .nothing
        default: break
        }
        let anchor: TimestampResponse
        do {
            anchor = try await client.get(
                ["rooms", roomID, "timestamp_to_event"],
                query: [("ts", String(time)), ("dir", direction == .before ? "b" : "f")], version: "v1")
        } catch .server(404, _, _) {
            return .nothing  // no event on that side of the time
        }
        // Walking back starts just after the anchor (it is included); walking forward, just before it.
        let context: ContextResponse = try await client.get(
            ["rooms", roomID, "context", anchor.eventID], query: [("limit", "0")])
        guard let token = direction == .before ? context.end : context.start else {
            throw .invalidResponse(url: "/rooms/\(roomID)/context", reason: "no \(direction == .before ? "end" : "start") token")
        }
        return .token(token)
    }
}
