import FlatCache

/// An adversarial ``MessageSource`` of string-id events: it answers at once
/// (zero latency), keeps the protocol's contract (a page is the `limit`
/// events nearest the time) and nothing more: within a millisecond it hands
/// out events in the reverse of the collection's order, so a page that ends
/// inside a millisecond holds that millisecond's last ids, not its first.
/// Its change log never reports anything: new events are the gap's to find.
actor TieSource: MessageSource {
    typealias Message = RoomEvent

    struct Offline: Error {}

    private var events = [RoomEvent]()
    private var isOffline = false
    /// How many pages were asked for.
    private(set) var pageCalls = 0
    /// The most events a page holds, whatever the limit (a server that ignores large limits).
    private var cap = Int.max
    /// Whether a page goes on to the end of its farthest millisecond (more than the limit, overlapping the next).
    private var finishesMilliseconds = false

    /// Adds events to the server.
    func send(_ new: [RoomEvent]) { events += new }

    /// Makes every call throw (`true`) or answer again.
    func setOffline(_ offline: Bool) { isOffline = offline }

    /// Makes pages hold at most `cap` events, and (`finishing`) go on to the end of their farthest millisecond.
    func setPaging(cap: Int = .max, finishing: Bool = false) {
        self.cap = cap
        finishesMilliseconds = finishing
    }

    func messages(
        in channelURL: String, _ direction: PageDirection, _ timestamp: Int64, limit: Int
    ) async throws -> MessagePage<RoomEvent> {
        guard !isOffline else { throw Offline() }
        pageCalls += 1
        // Time ascending; within a millisecond, ids descending.
        let ordered = events.filter { $0.channelURL == channelURL }.sorted {
            $0.createdAt != $1.createdAt ? $0.createdAt < $1.createdAt : $0.messageID > $1.messageID
        }
        let limit = min(limit, cap)
        switch direction {
        case .before:
            let older = ordered.filter { $0.createdAt < timestamp }
            var page = older.suffix(limit)
            if finishesMilliseconds, let edge = page.first?.createdAt { page = older.suffix(from: older.firstIndex { $0.createdAt == edge }!) }
            return MessagePage(messages: Array(page), hasMore: older.count > page.count)
        case .after:
            let newer = ordered.filter { $0.createdAt > timestamp }
            var page = newer.prefix(limit)
            if finishesMilliseconds, let edge = page.last?.createdAt { page = newer.prefix { $0.createdAt <= edge } }
            return MessagePage(messages: Array(page), hasMore: newer.count > page.count)
        }
    }

    func changeLogToken(in channelURL: String) async throws -> String {
        guard !isOffline else { throw Offline() }
        return "now"
    }

    func changeLog(in channelURL: String, since token: String) async throws -> MessageChangeLog<RoomEvent> {
        guard !isOffline else { throw Offline() }
        return .changes(updated: [], deleted: [], next: "now", hasMore: false)
    }

    func liveEvents() async -> AsyncStream<LiveEvent<RoomEvent>> {
        AsyncStream { $0.finish() }
    }
}
