import FlatCache

/// Every joined room's newest events from one `/sync`, and that sync's
/// `next_batch`: what a first sync of many rooms asks each room for,
/// fetched at once (see ``MatrixSource/prefetchNewestPages(eventsPerRoom:)``).
///
/// It answers only while *fresh*, and once stale it never answers again,
/// so an answer from it is never older than one given before from the server:
/// - until ``MatrixSource/endPrefetch()``,
/// - for ``maxAge`` after the sync,
/// - until a live `/sync` answer brings any room's news: a listener that
///   joins a shared subscription after that answer was told would miss its
///   events, were its page as old as this sync.
actor PrefetchedPages {
    /// One room's newest events, oldest first.
    struct Room: Sendable {
        /// The room's shown messages among them, edits applied.
        var messages: [MatrixMessage]
        /// The oldest of the events' times (every message event counts, as in a walk through `/messages`).
        var oldestTime: Int64
        /// The `/messages` token to walk back on from; `nil` when these are all of the room's events.
        var prevBatch: String?
    }

    /// How long the pages answer after their sync.
    static let maxAge = Duration.seconds(60)

    private var token: String?
    private var rooms = [String: Room]()
    private var takenAt = ContinuousClock.now
    private var isStale = true

    /// Keeps `rooms` and `token` (the sync's `next_batch`), asked for at
    /// `takenAt`, in place of any earlier prefetch. Call it before the
    /// collections it serves start: an answer the server gave them before
    /// may be newer than this sync.
    func store(_ rooms: [String: Room], token: String, takenAt: ContinuousClock.Instant) {
        self.rooms = rooms
        self.token = token
        self.takenAt = takenAt
        isStale = false
    }

    /// The sync's token, while fresh.
    func freshToken() -> String? {
        guard isFresh() else { return nil }
        return token
    }

    /// The room's newest events, while fresh; `nil` for a room the sync did not hold.
    func newest(in roomID: String) -> Room? {
        guard isFresh() else { return nil }
        return rooms[roomID]
    }

    /// Stops answering, for good.
    func retire() {
        isStale = true
        rooms = [:]
        token = nil
    }

    private func isFresh() -> Bool {
        if !isStale, ContinuousClock.now - takenAt > Self.maxAge { retire() }
        return !isStale
    }
}
