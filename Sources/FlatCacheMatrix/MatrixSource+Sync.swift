import FlatCache
import Foundation

/// Change logs and live events through `/sync`.
extension MatrixSource {
    // MARK: - Filters

    /// A `/sync` filter for only the token: no rooms, no presence, no account data.
    static let tokenFilter = #"{"room":{"rooms":[]},"presence":{"not_types":["*"]},"account_data":{"not_types":["*"]}}"#

    /// A `/sync` filter for the timelines (and, when asked, the name and avatar changes) of `rooms`, or every room.
    static func syncFilter(rooms: [String]?, timelineLimit: Int, stateTypes: [String]) -> String {
        let quoted = { (list: [String]) in list.map { "\"\(Self.jsonEscaped($0))\"" }.joined(separator: ",") }
        let roomList = rooms.map { #""rooms":[\#(quoted($0))],"# } ?? ""
        return #"{"room":{\#(roomList)"timeline":{"limit":\#(timelineLimit)},"state":{"types":[\#(quoted(stateTypes))]},"#
            + #""ephemeral":{"not_types":["*"]},"account_data":{"not_types":["*"]}},"#
            + #""presence":{"not_types":["*"]},"account_data":{"not_types":["*"]}}"#
    }

    /// State events that change what a room looks like in the channel list.
    static let roomLookTypes = ["m.room.name", "m.room.avatar", "m.room.topic", "m.room.canonical_alias"]

    // MARK: - Tokens and change logs

    /// The account's `/sync` token now, from a sync that asks for nothing.
    func currentSyncToken() async throws(MatrixError) -> String {
        if let prefetched = await prefetched.freshToken() { return prefetched }  // the prefetched pages' token
        let response: SyncResponse = try await sync(since: nil, timeout: 0, filter: Self.tokenFilter)
        return response.nextBatch
    }

    func sync(since token: String?, timeout: Double, filter: String) async throws(MatrixError) -> SyncResponse {
        var query = [("timeout", String(Int(timeout * 1_000))), ("filter", filter)]
        if let token { query.append(("since", token)) }
        let response: SyncResponse = try await client.get(["sync"], query: query, extraTimeout: timeout)
        // A live answer with news: a collection that starts after it is told must not get an older page.
        if timeout > 0, !response.joined.isEmpty || !response.left.isEmpty { await prefetched.retire() }
        return response
    }

    /// A sync from `token`, or `nil` when the server refuses the token (too old, or not its own).
    private func sync(fromPossiblyStale token: String, filter: String) async throws(MatrixError) -> SyncResponse? {
        do {
            return try await sync(since: token, timeout: 0, filter: filter)
        } catch .server(400, _, _) {
            return nil
        }
    }

    func roomChangeLog(in roomID: String, since token: String) async throws(MatrixError) -> MessageChangeLog<MatrixMessage> {
        guard !roomID.isEmpty else { throw .invalidArgument("the room id is empty") }
        let filter = Self.syncFilter(rooms: [roomID], timelineLimit: max(changeLogTimelineLimit, 1), stateTypes: [])
        guard let response = try await sync(fromPossiblyStale: token, filter: filter) else { return .tokenTooOld }
        guard let room = response.joined[roomID] else {
            return .changes(updated: [], deleted: [], next: response.nextBatch, hasMore: false)
        }
        guard let events = try await timeline(of: room, in: roomID, since: token) else { return .tokenTooOld }
        var updated = [String: MatrixMessage]()
        var deleted = [String]()
        for change in try await changes(in: events, roomID: roomID) {
            switch change {
            case .added(let message), .edited(let message): updated[message.eventID] = message
            case .redacted(let id):
                updated[id] = nil
                deleted.append(id)
            case .roomLookChanged: break
            }
        }
        let messages = updated.values.sorted { ($0.createdAt, $0.eventID) < ($1.createdAt, $1.eventID) }
        return .changes(updated: messages, deleted: deleted, next: response.nextBatch, hasMore: false)
    }

    /// The room's events in a sync, oldest first; a `limited` timeline's gap
    /// is walked back to `token` first. `nil` when the gap holds more than ``maxGapEvents``.
    func timeline(of room: SyncResponse.JoinedRoom, in roomID: String, since token: String) async throws(MatrixError)
        -> [MatrixEvent]?
    {
        let events = room.timeline?.events ?? []
        guard room.timeline?.limited == true, let prevBatch = room.timeline?.prevBatch else { return events }
        var gap = [MatrixEvent]()
        var from = prevBatch
        for _ in 0..<maxRequestsPerCall {
            let response: MessagesResponse = try await client.get(
                ["rooms", roomID, "messages"],
                query: [("dir", "b"), ("from", from), ("to", token), ("limit", "100"),
                        ("filter", #"{"types":["m.room.message","m.room.redaction"]}"#)])
            gap += response.chunk
            if gap.count > maxGapEvents { return nil }
            guard let end = response.end, !response.chunk.isEmpty else { break }
            from = end
        }
        return gap.reversed() + events
    }

    /// What a room's events, oldest first, do to its messages, in order. An
    /// edit reads the message it edits from the server, with its newest edit applied.
    func changes(in events: [MatrixEvent], roomID: String) async throws(MatrixError) -> [TimelineChange] {
        var changes = [TimelineChange]()
        for event in events {
            if let message = event.message(in: roomID) {
                changes.append(.added(message))
            } else if let original = event.editedEventID {
                if let message = try await currentMessage(original, in: roomID) { changes.append(.edited(message)) }
            } else if event.type == "m.room.redaction", let target = event.redacts {
                changes.append(.redacted(target))
            } else if event.stateKey != nil, Self.roomLookTypes.contains(event.type) {
                changes.append(.roomLookChanged)
            }
        }
        return changes
    }

    /// The message `eventID` as the server has it now, its newest edit
    /// applied; `nil` when it is gone (redacted, or not visible to the account).
    private func currentMessage(_ eventID: String, in roomID: String) async throws(MatrixError) -> MatrixMessage? {
        do {
            let event: MatrixEvent = try await client.get(["rooms", roomID, "event", eventID])
            return event.message(in: roomID)
        } catch .server(404, _, _) {
            return nil
        }
    }

    // MARK: - Live

    /// The message events of a live sync.
    func liveEvents(in batch: LiveBatch) async throws(MatrixError) -> [LiveEvent<MatrixMessage>] {
        var events = [LiveEvent<MatrixMessage>]()
        for (roomID, room) in batch.response.joined.sorted(by: { $0.key < $1.key }) {
            // A gap too long to walk keeps what the sync gave; a collection's sync() finds the rest.
            let timeline = try await timeline(of: room, in: roomID, since: batch.since) ?? room.timeline?.events ?? []
            let state = room.state?.events ?? []
            var roomChanged = state.contains { $0.stateKey != nil && Self.roomLookTypes.contains($0.type) }
            for change in try await changes(in: timeline, roomID: roomID) {
                switch change {
                case .added(let message): events.append(.messageAdded(message))
                case .edited(let message): events.append(.messageUpdated(message))
                case .redacted(let id): events.append(.messageDeleted(id, channelURL: roomID))
                case .roomLookChanged: roomChanged = true
                }
            }
            if roomChanged { events.append(.channelUpdated(channelURL: roomID)) }
        }
        for roomID in batch.response.left.sorted() { events.append(.channelDeleted(channelURL: roomID)) }
        return events
    }

    /// `text` escaped for a JSON string.
    static func jsonEscaped(_ text: String) -> String {
        guard let data = try? JSONEncoder().encode(text) else { return text }
        return String(decoding: data.dropFirst().dropLast(), as: UTF8.self)
    }
}

/// One live `/sync` answer and the token it was asked with.
struct LiveBatch: Sendable {
    var response: SyncResponse
    var since: String
}

/// What one event does to a room's messages.
enum TimelineChange: Sendable {
    /// A new message.
    case added(MatrixMessage)
    /// An edited message, as it is now.
    case edited(MatrixMessage)
    /// A message redacted.
    case redacted(String)
    /// The room's name, avatar, topic or alias changed.
    case roomLookChanged
}
