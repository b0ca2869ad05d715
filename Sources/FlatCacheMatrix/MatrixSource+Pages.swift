import FlatCache

/// Pages around a time: the timestamp API finds where to start, `/messages` walks.
extension MatrixSource {
    /// The `/messages` filter: only message events (edits and redacted messages are left out here).
    static let messageFilter = #"{"types":["m.room.message"],"lazy_load_members":true}"#
    /// Times past this (the year 2100) mean "after every event".
    static let farFuture: Int64 = 4_102_444_800_000

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
        let keep: (Int64) -> Bool = direction == .before ? { $0 < timestamp } : { $0 > timestamp }
        var found = [MatrixMessage]()
        var from: String?  // nil: from the timeline's edge
        var reachedEnd = false
        var farthestWalked = direction == .before ? Int64.max : .min
        if direction == .before, timestamp >= Self.farFuture, let newest = await prefetched.newest(in: roomID) {
            // The newest events came with the first sync: the walk starts with them, as from the timeline's edge.
            found = newest.messages.filter { keep($0.createdAt) }
            farthestWalked = newest.oldestTime
            from = newest.prevBatch
            reachedEnd = newest.prevBatch == nil
        } else if let resume = await resumes.resume(roomID, direction, from: timestamp) {
            // The page right after the one before: walk on from where that walk stopped.
            found = resume.walked.filter { keep($0.createdAt) }
            from = resume.token
            reachedEnd = resume.token == nil
        } else {
            // The walk starts a little beyond the time, so that messages sharing a
            // millisecond, or stored a little out of time order, are all met.
            let near = direction == .before
                ? timestamp.addingReportingOverflow(timestampSlack)
                : timestamp.subtractingReportingOverflow(timestampSlack)
            let time = near.overflow ? (direction == .before ? Int64.max : .min) : near.partialValue
            switch try await walkStart(in: roomID, near: time, direction) {
            case .nothing: return MessagePage(messages: [], hasMore: false)
            case .timelineEdge: from = nil
            case .token(let token): from = token
            }
        }
        // The page is the `limit` messages nearest the time in the collection's
        // order (time, then id), which within a millisecond is not the timeline's:
        // walk until one more than that is found and the walk is past the page's
        // farthest millisecond by the slack (so every message of that millisecond
        // was met). 20 events of headroom make one request do, usually.
        let batch = String(min(limit + 21, 1_000))
        var met = Set(found.map(\.eventID))  // a walk on from a prefetch's `prev_batch` may meet its events again
        for _ in 0..<maxRequestsPerCall {
            if reachedEnd || Self.isComplete(found, limit: limit, direction, walkedTo: farthestWalked, slack: timestampSlack) {
                break
            }
            var query = [("dir", direction == .before ? "b" : "f"), ("limit", batch), ("filter", Self.messageFilter)]
            if let from { query.append(("from", from)) }
            let response: MessagesResponse = try await client.get(["rooms", roomID, "messages"], query: query)
            for event in response.chunk {
                farthestWalked = direction == .before
                    ? min(farthestWalked, event.originServerTS) : max(farthestWalked, event.originServerTS)
                if let message = event.message(in: roomID), keep(message.createdAt), met.insert(message.eventID).inserted {
                    found.append(message)
                }
            }
            if let end = response.end, !response.chunk.isEmpty { from = end } else { reachedEnd = true }
        }
        let ordered = Self.nearestFirst(found, direction)
        let page = Array(ordered.prefix(limit))
        let hasMore = ordered.count > limit
        // The next page asks from this one's farthest millisecond (see WalkResumes): it walks on from here.
        let edge = direction == .before
            ? page.map(\.createdAt).min().map { $0 &+ 1 }
            : page.map(\.createdAt).max().map { $0 &- 1 }
        if hasMore, let edge {
            await resumes.remember(roomID, direction, from: edge, token: reachedEnd ? nil : from, walked: found)
        }
        return MessagePage(messages: direction == .before ? page.reversed() : page, hasMore: hasMore)
    }

    /// `messages` nearest first: newest first walking back, oldest first walking forward (time, then id).
    private static func nearestFirst(_ messages: [MatrixMessage], _ direction: PageDirection) -> [MatrixMessage] {
        let ascending = messages.sorted { ($0.createdAt, $0.eventID) < ($1.createdAt, $1.eventID) }
        return direction == .before ? ascending.reversed() : ascending
    }

    /// Whether `found` holds the page and one more, and the walk went past the
    /// page's farthest millisecond by `slack`: no message of the page can come later.
    private static func isComplete(
        _ found: [MatrixMessage], limit: Int, _ direction: PageDirection, walkedTo farthest: Int64, slack: Int64
    ) -> Bool {
        guard found.count > limit else { return false }
        let times = found.map(\.createdAt).sorted()
        // The page's farthest millisecond: the limit-th nearest message's.
        if direction == .before {
            return farthest < times[times.count - limit] &- slack
        } else {
            return farthest > times[limit - 1] &+ slack
        }
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
