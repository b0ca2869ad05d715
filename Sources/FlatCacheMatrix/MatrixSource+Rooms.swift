import FlatCache

/// The channel list: joined rooms, newest last message first.
extension MatrixSource {
    /// How many rooms (or profiles) are read at once.
    static let parallelReads = 8

    func roomPage(from cursor: String?, limit: Int) async throws(MatrixError) -> ChannelPage<MatrixRoom> {
        guard limit >= 1 else { throw .invalidArgument("the page limit is \(limit); it must be 1 or more") }
        let offset: Int
        if let cursor {
            guard let value = Int(cursor), value >= 0 else { throw .invalidArgument("'\(cursor)' is not a channel list cursor") }
            offset = value
        } else {
            offset = 0
        }
        let joined: JoinedRoomsResponse = try await client.get(["joined_rooms"])
        let me: WhoAmIResponse = try await client.get(["account", "whoami"])
        let rooms = try await Self.concurrentMap(joined.joinedRooms) { roomID throws(MatrixError) in
            try await room(roomID, me: me.userID)
        }
        let ordered = rooms.compactMap { $0 }.sorted { ($0.lastMessageAt, $1.roomID) > ($1.lastMessageAt, $0.roomID) }
        let page = Array(ordered.dropFirst(offset).prefix(limit))
        let next = offset + page.count < ordered.count ? String(offset + page.count) : nil
        return ChannelPage(channels: page, next: next)
    }

    func roomListChangeLog(since token: String) async throws(MatrixError) -> ChannelChangeLog<MatrixRoom> {
        let filter = Self.syncFilter(rooms: nil, timelineLimit: 1, stateTypes: Self.roomLookTypes)
        let response: SyncResponse
        do {
            response = try await sync(since: token, timeout: 0, filter: filter)
        } catch .server(400, _, _) {
            return .tokenTooOld
        }
        let events = try await roomEvents(in: LiveBatch(response: response, since: token))
        var updated = [MatrixRoom]()
        var removed = [String]()
        for event in events {
            switch event {
            case .updated(let room): updated.append(room)
            case .removed(let roomID): removed.append(roomID)
            }
        }
        return .changes(updated: updated, removed: removed, next: response.nextBatch, hasMore: false)
    }

    /// The channel list's changes in a sync: each room with news, read again; each room left.
    func roomEvents(in batch: LiveBatch) async throws(MatrixError) -> [ChannelEvent<MatrixRoom>] {
        let changed = batch.response.joined.keys.sorted()
        var events = [ChannelEvent<MatrixRoom>]()
        if !changed.isEmpty {
            let me: WhoAmIResponse = try await client.get(["account", "whoami"])
            let rooms = try await Self.concurrentMap(changed) { roomID throws(MatrixError) in try await room(roomID, me: me.userID) }
            events += rooms.compactMap { $0 }.map { .updated($0) }
        }
        events += batch.response.left.sorted().map { .removed(channelURL: $0) }
        return events
    }

    /// The room as the channel list shows it; `nil` when the account can no longer read it.
    func room(_ roomID: String, me: String) async throws(MatrixError) -> MatrixRoom? {
        do {
            let members: JoinedMembersResponse = try await client.get(["rooms", roomID, "joined_members"])
            let name: String? = try await stateField(roomID, "m.room.name") { $0.name }
            let alias: String? = name == nil ? try await stateField(roomID, "m.room.canonical_alias") { $0.alias } : nil
            let avatar: String? = try await stateField(roomID, "m.room.avatar") { $0.url }
            let first: MessagesResponse = try await client.get(["rooms", roomID, "messages"], query: [("dir", "f"), ("limit", "1")])
            let last = try await page(in: roomID, .before, .max, limit: 1).messages.last
            let others = members.joined.filter { $0.key != me }
                .map { $0.value.displayName ?? $0.key }.sorted()
            let fallback = others.isEmpty ? roomID : others.prefix(3).joined(separator: ", ")
            return MatrixRoom(
                roomID: roomID, name: nonEmpty(name) ?? nonEmpty(alias) ?? fallback, avatarURL: avatar ?? "",
                joinedMemberCount: members.joined.count, createdAt: first.chunk.first?.originServerTS ?? 0,
                lastMessage: last)
        } catch .server(403, _, _) {
            return nil  // left or kicked between listing and reading
        }
    }

    /// A field of the room's state event of `type`; `nil` when the room has none.
    private func stateField(
        _ roomID: String, _ type: String, _ field: (StateContent) -> String?
    ) async throws(MatrixError) -> String? {
        do {
            let content: StateContent = try await client.get(["rooms", roomID, "state", type, ""])
            return field(content)
        } catch .server(404, _, _) {
            return nil
        }
    }

    private func nonEmpty(_ text: String?) -> String? {
        guard let text, !text.isEmpty else { return nil }
        return text
    }

    // MARK: - Profiles

    func profiles(of userIDs: [String]) async throws(MatrixError) -> [ChatUser] {
        let users = try await Self.concurrentMap(userIDs) { userID throws(MatrixError) -> ChatUser? in
            do throws(MatrixError) {
                let profile: ProfileResponse = try await client.get(["profile", userID])
                return ChatUser(
                    userID: userID, nickname: profile.displayName ?? Self.localpart(of: userID),
                    profileURL: profile.avatarURL ?? "")
            } catch {
                // Unknown, or not shown to this account.
                if case .server(let status, _, _) = error, status == 404 || status == 403 { return nil }
                throw error
            }
        }
        return users.compactMap { $0 }
    }

    /// `mina` of `@mina:example.org`.
    static func localpart(of userID: String) -> String {
        let withoutSigil = userID.hasPrefix("@") ? String(userID.dropFirst()) : userID
        return withoutSigil.split(separator: ":", maxSplits: 1).first.map(String.init) ?? withoutSigil
    }

    /// `transform` of each element, at most ``parallelReads`` at a time, in the elements' order.
    static func concurrentMap<Element: Sendable, Result: Sendable>(
        _ elements: [Element], _ transform: @escaping @Sendable (Element) async throws(MatrixError) -> Result
    ) async throws(MatrixError) -> [Result] {
        do {
            return try await withThrowingTaskGroup(of: (Int, Result).self) { group in
                var results = [Result?](repeating: nil, count: elements.count)
                var next = 0
                func addNext() {
                    guard next < elements.count else { return }
                    let index = next
                    let element = elements[index]
                    group.addTask { (index, try await transform(element)) }
                    next += 1
                }
                for _ in 0..<parallelReads { addNext() }
                while let (index, result) = try await group.next() {
                    results[index] = result
                    addNext()
                }
                return results.compactMap { $0 }
            }
        } catch let error as MatrixError {
            throw error
        } catch {
            throw .invalidResponse(url: "", reason: "\(error)")
        }
    }
}

/// The content of the state events the channel list reads.
struct StateContent: Decodable, Sendable {
    var name: String?
    var alias: String?
    var url: String?

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = container.lenient(String.self, .name)
        alias = container.lenient(String.self, .alias)
        url = container.lenient(String.self, .url)
    }

    enum CodingKeys: String, CodingKey { case name, alias, url }
}
