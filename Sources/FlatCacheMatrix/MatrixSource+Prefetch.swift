import FlatCache

/// A first sync of many rooms in one request: every room's newest page from one `/sync`.
extension MatrixSource {
    /// Fetches the newest `eventsPerRoom` message events of every joined
    /// room in one `/sync` (no `since`, a timeline limit, only
    /// `m.room.message` events), so that the collections then started answer
    /// their first page and change log token from it instead of asking the
    /// server for each room.
    ///
    /// ```swift
    /// let account = try await MatrixAccount.resume(homeserver: homeserver, accessToken: accessToken)
    /// let source = MatrixSource(client: account.client)
    /// let cache = try MatrixCache(directory: folder)
    /// let rooms = try await source.prefetchNewestPages(eventsPerRoom: 50 + 21)
    /// for roomID in rooms {  // no request for the newest pages
    ///     try await MessageCollection(channelURL: roomID, store: cache.messages, source: source, pageSize: 50).start()
    /// }
    /// await source.endPrefetch()
    /// ```
    ///
    /// While the prefetch is fresh (see below), ``messages(in:_:_:limit:)``
    /// before any time from now on answers from the room's prefetched events
    /// exactly as a walk through `/messages` from the timeline's newest event
    /// would: the same events, in the collection's order (time, then id), the
    /// messages sharing the page's farthest millisecond included; when they
    /// are not enough, the walk goes on from the timeline's `prev_batch`.
    /// ``changeLogToken(in:)``, ``channelChangeLogToken()`` and the token a
    /// live subscription starts from are the sync's `next_batch`, so a page,
    /// its token and the live events after it all agree.
    ///
    /// It stays fresh until ``endPrefetch()``, for 60 seconds at most, and
    /// only until a live `/sync` brings news of any room (a collection that
    /// starts later reads the server again). Every later call is unchanged.
    ///
    /// Why `/sync` and not simplified sliding sync (MSC4186, which Synapse
    /// serves at `/_matrix/client/unstable/org.matrix.simplified_msc3575/sync`),
    /// measured on Synapse 1.163 with 63 rooms (`flatcache-bench matrix`): one
    /// sliding sync of every room's newest 121 events took 272 ms, one such
    /// `/sync` 484 ms, but a first sync took 4 s, most of it the channel list.
    /// The `/sync` is standard on every homeserver; its `next_batch` is the
    /// token the change log and the live loop poll from, taken with the very
    /// pages it answers, where a sliding sync's `pos` is not a `/sync` token
    /// (a second request would give one, not matching the pages); and its
    /// timeline can be limited to message events, where a sliding sync's
    /// counts state events, edits and reactions against the limit.
    ///
    /// - Parameter eventsPerRoom: Message events per room, 1 to 1,000: a
    ///   collection's page size plus 21 answers its first page in one go (a walk asks for as many).
    /// - Returns: The ids of the rooms prefetched.
    /// - Throws: ``MatrixError``; nothing is prefetched then, and every call asks the server as usual.
    @discardableResult
    public func prefetchNewestPages(eventsPerRoom: Int) async throws(MatrixError) -> [String] {
        guard (1...1_000).contains(eventsPerRoom) else {
            throw .invalidArgument("eventsPerRoom is \(eventsPerRoom); it must be 1 to 1,000")
        }
        let asked = ContinuousClock.now
        let response = try await sync(since: nil, timeout: 0, filter: Self.prefetchFilter(eventsPerRoom: eventsPerRoom))
        var rooms = [String: PrefetchedPages.Room]()
        for (roomID, room) in response.joined {
            var events = room.timeline?.events ?? []
            // An unlimited timeline of an initial sync is the room's whole history (of these types),
            // which Synapse sends without bundled edits: they are all among the events.
            let whole = room.timeline?.limited != true
            if whole { events = Self.withEditsBundled(events) }
            // A limited timeline goes on back from `prev_batch`, which Synapse puts just before its
            // oldest event or, when it did not cut the timeline, at its newest (the walk skips what it met).
            let prevBatch = room.timeline?.prevBatch
            if !whole, prevBatch == nil { continue }  // read as usual
            rooms[roomID] = PrefetchedPages.Room(
                messages: events.compactMap { $0.message(in: roomID) },
                oldestTime: events.map(\.originServerTS).min() ?? .max,
                prevBatch: whole ? nil : prevBatch)
        }
        await prefetched.store(rooms, token: response.nextBatch, takenAt: asked)
        return rooms.keys.sorted()
    }

    /// Stops answering from the prefetched pages: every later call asks the server.
    public func endPrefetch() async {
        await prefetched.retire()
    }

    /// `events` with the newest edit of each (by time, then id; from its own
    /// sender, of its own type) bundled as the server bundles it in `/messages`.
    static func withEditsBundled(_ events: [MatrixEvent]) -> [MatrixEvent] {
        let byID = Dictionary(events.map { ($0.eventID, $0) }, uniquingKeysWith: { first, _ in first })
        var newest = [String: MatrixEvent]()
        for edit in events where !edit.isRedacted {
            guard let original = edit.editedEventID, let target = byID[original],
                target.sender == edit.sender, target.type == edit.type
            else { continue }
            if let current = newest[original], (current.originServerTS, current.eventID) >= (edit.originServerTS, edit.eventID) {
                continue
            }
            newest[original] = edit
        }
        guard !newest.isEmpty else { return events }
        return events.map { event in
            guard event.replacement == nil, let edit = newest[event.eventID] else { return event }
            var bundled = event
            bundled.replacement = MatrixEvent.Replacement(eventID: edit.eventID, originServerTS: edit.originServerTS, content: edit.content)
            return bundled
        }
    }

    /// The prefetch's filter: message events only (as `/messages` pages are
    /// walked), no state beyond what the timeline needs, nothing else.
    static func prefetchFilter(eventsPerRoom: Int) -> String {
        #"{"room":{"timeline":{"limit":\#(eventsPerRoom),"types":["m.room.message"]},"state":{"types":[]},"#
            + #""ephemeral":{"not_types":["*"]},"account_data":{"not_types":["*"]}},"#
            + #""presence":{"not_types":["*"]},"account_data":{"not_types":["*"]}}"#
    }
}
