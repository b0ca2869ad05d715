import FlatCache
import FlatCacheMatrix
import Foundation
import Testing

/// FlatCache against a real Matrix homeserver: the local Synapse of
/// `Scripts/test-matrix`. Each test uses fresh accounts and rooms; every
/// wait is bounded, and each test closes its caches (no write-behind flush
/// may still run when the process exits). Serialized: one test stops and
/// restarts the server.
@Suite(.serialized, .enabled(if: Synapse.isEnabled, "needs the local Synapse: run Scripts/test-matrix"))
struct MatrixTests {
    let folder: TemporaryFolder

    init() throws {
        folder = try TemporaryFolder()
    }

    private func openCache() throws -> MatrixCache {
        try MatrixCache(directory: folder.url, configuration: Configuration(maxMessagesPerChannel: 2_000))
    }

    @Test func aFreshAccountIsCachedAndShownOffline() async throws {
        let mina = try await Synapse.newUser("mina")
        let bea = try await Synapse.newUser("bea")
        let trip = try await mina.createRoom("Trip", inviting: [bea])
        for index in 0..<5 { try await bea.send("trip \(index)", in: trip) }
        let lunch = try await mina.createRoom("Lunch")
        try await mina.send("lunch 0", in: lunch)
        let server = try await mina.serverMessages(in: trip)
        #expect(server.count == 5)

        let cache = try openCache()
        let list = try ChannelListCollection(store: cache.channels, source: mina.source)
        try await list.start()
        #expect(await list.channels.map(\.roomID) == [lunch, trip])  // newest last message first
        #expect(await list.channels.map(\.name) == ["Lunch", "Trip"])
        #expect(await list.channels.map(\.joinedMemberCount) == [1, 2])
        await list.dispose()

        let collection = try MessageCollection(channelURL: trip, store: cache.messages, source: mina.source)
        let events = EventLog(collection.events)
        try await collection.start()
        #expect(await collection.messages == canonical(server))
        try await events.wait { $0.contains { if case .replaced(let page) = $0 { page == canonical(server) } else { false } } }
        await collection.dispose()

        let directory = UserDirectory(users: cache.users, source: mina.source)
        let senders = try await directory.users(withIDs: server.map(\.sender))
        #expect(senders.map(\.userID) == [bea.userID])
        #expect(senders.first?.nickname == String(bea.userID.dropFirst().prefix { $0 != ":" }))
        try await cache.close()

        // Offline: a new cache on the folder, no source at all.
        let offline = try openCache()
        #expect(try await offline.messages.load(in: trip) == canonical(server))
        #expect(try await offline.channels.load().map(\.name) == ["Lunch", "Trip"])
        #expect(try await offline.users.user(withID: bea.userID)?.userID == bea.userID)
        #expect(try await offline.messages.continuity(in: trip).changeLogToken != nil)
        try await offline.close()
    }

    @Test func pagesBackAndForthMatchTheServer() async throws {
        let mina = try await Synapse.newUser("mina")
        let room = try await mina.createRoom("Pages")
        for index in 0..<25 { try await mina.send("message \(index)", in: room) }
        let server = canonical(try await mina.serverMessages(in: room))
        #expect(server.count == 25)

        // Back from the newest, a page of 10 at a time, through /timestamp_to_event, /context and /messages.
        let cache = try openCache()
        let newest = try MessageCollection(
            channelURL: room, store: cache.messages, source: WithoutLiveEvents(mina.source), pageSize: 10)
        try await newest.start()
        #expect(await newest.messages == Array(server.suffix(10)))
        for _ in 0..<5 where await newest.hasPrevious { try await newest.loadPrevious() }
        #expect(await newest.messages == server)
        #expect(await newest.hasPrevious == false)
        await newest.dispose()

        // Forward from a time in the middle, in a new folder: pages after it.
        let other = try TemporaryFolder()
        let second = try MatrixCache(directory: other.url)
        let point = server[11].createdAt
        let middle = try MessageCollection(
            channelURL: room, store: second.messages, source: WithoutLiveEvents(mina.source), startingPoint: point, pageSize: 5)
        try await middle.start()
        let upToPoint = server.filter { $0.createdAt <= point }
        #expect(await middle.messages == Array(upToPoint.suffix(5)))
        for _ in 0..<10 where await middle.hasNext { try await middle.loadNext() }
        #expect(await middle.messages == Array(server.drop { $0.eventID != upToPoint.suffix(5).first?.eventID }))
        #expect(await middle.hasNext == false)
        await middle.dispose()
        try await cache.close()
        try await second.close()
    }

    @Test func messagesSharingAMillisecondPageWithoutDuplicatesOrLoss() async throws {
        let mina = try await Synapse.newUser("mina")
        let room = try await mina.createRoom("Ties")
        // 24 messages in one millisecond, 3 in the next, 3 in the one after: pages of 10 must cut through them.
        let now = Int64(Date().timeIntervalSince1970 * 1_000) - 60_000
        for index in 0..<24 { try await mina.send("tie \(index)", in: room, at: now) }
        for index in 0..<3 { try await mina.send("next \(index)", in: room, at: now + 1) }
        for index in 0..<3 { try await mina.send("last \(index)", in: room, at: now + 2) }
        let server = canonical(try await mina.serverMessages(in: room))
        #expect(server.count == 30)

        let cache = try openCache()
        let back = try MessageCollection(
            channelURL: room, store: cache.messages, source: WithoutLiveEvents(mina.source), pageSize: 10)
        try await back.start()
        for _ in 0..<10 where await back.hasPrevious { try await back.loadPrevious() }
        let shownBack = await back.messages
        #expect(shownBack == server, "\(shownBack.count): \(shownBack.map(\.body).joined(separator: ","))")
        #expect(try await cache.messages.load(in: room) == server)
        await back.dispose()

        let other = try TemporaryFolder()
        let tiesForward = try MatrixCache(directory: other.url)
        let forward = try MessageCollection(
            channelURL: room, store: tiesForward.messages, source: WithoutLiveEvents(mina.source),
            startingPoint: now - 1, pageSize: 10)
        try await forward.start()
        #expect(await forward.messages.isEmpty)
        for _ in 0..<10 where await forward.hasNext { try await forward.loadNext() }
        let shownForward = await forward.messages
        #expect(shownForward == server, "\(shownForward.count): \(shownForward.map(\.body).joined(separator: ","))")
        await forward.dispose()
        try await cache.close()
        try await tiesForward.close()
    }

    @Test func fiftyMessagesWhileOfflineAreFilledOnReconnectWithoutDuplicatesOrLoss() async throws {
        let mina = try await Synapse.newUser("mina")
        let bea = try await Synapse.newUser("bea")
        let room = try await mina.createRoom("Gap", inviting: [bea])
        for index in 0..<10 { try await mina.send("before \(index)", in: room) }

        let cache = try openCache()
        // A small sync timeline, so that 50 messages make a `limited` sync: the gap is walked through /messages.
        var source = mina.source
        source.changeLogTimelineLimit = 10
        let collection = try MessageCollection(channelURL: room, store: cache.messages, source: WithoutLiveEvents(source))
        let events = EventLog(collection.events)
        try await collection.start()
        #expect(await collection.messages.count == 10)

        // Offline: no live events reach the collection while Bea writes.
        let first = try await bea.send("while away 0", in: room)
        try await bea.send(49, "while away", in: room)
        let edited = try #require(await collection.messages.first)
        try await mina.edit(edited.eventID, in: room, to: "edited while away")

        try await collection.sync()  // reconnect
        let server = try await mina.serverMessages(in: room)
        #expect(server.count == 60)
        let shown = await collection.messages
        #expect(shown.map(\.eventID).sorted() == server.map(\.eventID).sorted())
        #expect(Set(shown.map(\.eventID)).count == shown.count)
        #expect(shown.first?.body == "edited while away")
        let added = try await events.first { if case .added(let messages) = $0 { messages } else { nil } }
        #expect(added.count == 50)
        #expect(added.contains { $0.eventID == first })
        let cached = try await cache.messages.load(in: room)
        #expect(cached.map(\.eventID).sorted() == server.map(\.eventID).sorted())
        #expect(Dictionary(uniqueKeysWithValues: cached.map { ($0.eventID, $0.body) })
            == Dictionary(uniqueKeysWithValues: server.map { ($0.eventID, $0.body) }))
        await collection.dispose()
        try await cache.close()
    }

    @Test func fourHundredMessagesWhileOfflineAreAHugeGap() async throws {
        let mina = try await Synapse.newUser("mina")
        let room = try await mina.createRoom("Busy")
        for index in 0..<5 { try await mina.send("old \(index)", in: room) }
        let cache = try openCache()
        let collection = try MessageCollection(
            channelURL: room, store: cache.messages, source: WithoutLiveEvents(mina.source), hugeGapThreshold: 300)
        let events = EventLog(collection.events)
        try await collection.start()

        try await mina.send(400, "new", in: room, parallel: 8)
        var last = [String]()  // sent one after another: the newest page, in time order
        for index in 0..<30 { last.append(try await mina.send("last \(index)", in: room)) }
        try await collection.sync()
        _ = try await events.first { if case .hugeGap = $0 { true } else { nil } }
        // The server's newest page replaced the view and the whole cache: the 5 old ones are gone.
        let replaced = try await events.first { if case .replaced(let page) = $0, page.count == 30 { page } else { nil } }
        #expect(Set(replaced.map(\.eventID)) == Set(last))
        #expect(Set(await collection.messages.map(\.eventID)) == Set(last))
        #expect(Set(try await cache.messages.load(in: room).map(\.eventID)) == Set(last))
        #expect(try await cache.messages.continuity(in: room).changeLogToken != nil)
        await collection.dispose()

        // A new collection shows the same page, and pages back through the whole room from the server.
        let fresh = try MessageCollection(channelURL: room, store: cache.messages, source: mina.source, pageSize: 100)
        try await fresh.start()
        let server = try await mina.serverMessages(in: room)
        #expect(server.count == 435)
        #expect(Set(await fresh.messages.suffix(30).map(\.eventID)) == Set(last))
        for _ in 0..<10 where await fresh.hasPrevious { try await fresh.loadPrevious() }
        #expect(await fresh.messages == canonical(server))
        await fresh.dispose()
        try await cache.close()
    }

    @Test func aHugeGapThroughTheSampleLeavesTheNewestPageAloneAndSaysSo() async throws {
        // Given a room whose 50 messages the sample's sync cached
        let mina = try await Synapse.newUser("mina")
        let room = try await mina.createRoom("Busy")
        try await mina.send(50, "old", in: room, parallel: 8)
        let homeserver = try Synapse.url().absoluteString
        let sync = ["sync", "--homeserver", homeserver, "--access-token", mina.client.accessToken ?? "", "--directory", folder.url.path]
        let first = try ToolRun(sync, of: "flatcache-matrix", in: folder.url)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout.contains("Busy (\(room)): 50 messages cached\n"))

        // When 400 more are sent and it syncs again
        try await mina.send(350, "new", in: room, parallel: 8)
        var last = [String]()  // one after another: the newest page, in time order
        for index in 0..<50 { last.append(try await mina.send("last \(index)", in: room)) }
        let second = try ToolRun(sync, of: "flatcache-matrix", in: folder.url)

        // Then it says there was a huge gap, and caches the server's newest 50 alone
        #expect(second.status == 0, "\(second.stderr)")
        #expect(second.stdout.contains("Busy (\(room)): 50 messages cached (a huge gap: more than 300 missed; only the newest page is cached)"))
        let offline = try MatrixCache(directory: folder.url, configuration: Configuration(maxMessagesPerChannel: .max, readOnly: true))
        let cached = try await offline.messages.load(in: room)
        #expect(cached.count == 50)
        #expect(Set(cached.map(\.eventID)) == Set(last))
        try await offline.close()
        // and 'messages' shows them as the whole cache
        let shown = try ToolRun(["messages", room, "--limit", "100", "--directory", folder.url.path], of: "flatcache-matrix", in: folder.url)
        #expect(shown.stdout.contains("the newest 50 of 50 cached messages"), "\(shown.stdout)\(shown.stderr)")
        #expect(!shown.stdout.contains("old "))
        #expect(!shown.stdout.contains("new "))
        // and 'search' finds the newest page offline, and nothing of what the gap left out
        func search(_ query: String) throws -> ToolRun {
            try ToolRun(["search", query, "--limit", "100", "--directory", folder.url.path], of: "flatcache-matrix", in: folder.url)
        }
        let found = try search("last")
        #expect(found.status == 0 && found.stdout.hasSuffix("\n50 hits, no more\n"), "\(found.stdout)\(found.stderr)")
        #expect(try search("old").stdout == "no cached message matches \"old\"\n")

        // and a plain sync after it keeps it so: no old messages come back beside the new ones
        let third = try ToolRun(sync, of: "flatcache-matrix", in: folder.url)
        #expect(third.stdout.contains("Busy (\(room)): 50 messages cached\n"), "\(third.stdout)")
        let after = try MatrixCache(directory: folder.url, configuration: Configuration(maxMessagesPerChannel: .max, readOnly: true))
        #expect(Set(try await after.messages.load(in: room).map(\.eventID)) == Set(last))
        try await after.close()
    }

    @Test func aMessageSentTheMomentStartReturnsComesLive() async throws {
        // MatrixSource.liveEvents() returns once it holds its /sync token: nothing after start() waits for a sync.
        let mina = try await Synapse.newUser("mina")
        let room = try await mina.createRoom("Window")
        try await mina.send("before", in: room)
        let cache = try openCache()
        let collection = try MessageCollection(channelURL: room, store: cache.messages, source: mina.source)
        let events = EventLog(collection.events)
        try await collection.start()
        let sent = try await mina.send("right after start", in: room)

        let added = try await events.first(within: 20) { event -> [MatrixMessage]? in
            if case .added(let messages) = event, messages.contains(where: { $0.eventID == sent }) { messages } else { nil }
        }
        #expect(added.map(\.eventID) == [sent])
        #expect(await collection.messages.map(\.body) == ["before", "right after start"])
        await collection.dispose()
        try await cache.close()
    }

    @Test func anEditAndARedactionReachTheCacheAndTheEvents() async throws {
        let mina = try await Synapse.newUser("mina")
        let room = try await mina.createRoom("Edits")
        var ids = [String]()
        for index in 0..<4 { ids.append(try await mina.send("message \(index)", in: room)) }
        let cache = try openCache()
        let collection = try MessageCollection(channelURL: room, store: cache.messages, source: mina.source)
        let events = EventLog(collection.events)
        try await collection.start()

        // Live.
        try await mina.edit(ids[1], in: room, to: "message 1, edited")
        try await mina.redact(ids[2], in: room)
        let updated = try await events.first(within: 20) { if case .updated(let messages) = $0 { messages } else { nil } }
        #expect(updated.map(\.eventID) == [ids[1]])
        #expect(updated.first?.body == "message 1, edited")
        #expect(updated.first?.isEdited == true)
        let deleted = try await events.first(within: 20) { if case .deleted(let ids) = $0 { ids } else { nil } }
        #expect(deleted == [ids[2]])
        #expect(await collection.messages.map(\.eventID) == [ids[0], ids[1], ids[3]])
        #expect(try await cache.messages.load(in: room).map(\.body) == ["message 0", "message 1, edited", "message 3"])
        await collection.dispose()

        // Through the change log, with no collection listening.
        try await mina.edit(ids[0], in: room, to: "message 0, edited")
        try await mina.redact(ids[3], in: room)
        let next = try MessageCollection(channelURL: room, store: cache.messages, source: WithoutLiveEvents(mina.source))
        let nextEvents = EventLog(next.events)
        try await next.start()
        #expect(try await cache.messages.load(in: room).map(\.body) == ["message 0, edited", "message 1, edited"])
        #expect(await next.messages.map(\.body) == ["message 0, edited", "message 1, edited"])
        let cachedPage = try await nextEvents.first { if case .cachedPage(let page) = $0 { page } else { nil } }
        #expect(cachedPage.map(\.body) == ["message 0", "message 1, edited", "message 3"])
        await next.dispose()
        try await cache.close()
    }

    @Test func aNewRoomAndALeftRoomChangeTheChannelList() async throws {
        let mina = try await Synapse.newUser("mina")
        let kept = try await mina.createRoom("Kept")
        let left = try await mina.createRoom("Left")
        let cache = try openCache()
        let list = try ChannelListCollection(store: cache.channels, source: mina.source)
        let events = EventLog(list.events)
        try await list.start()
        #expect(Set(await list.channels.map(\.roomID)) == [kept, left])

        // Live.
        let joined = try await mina.createRoom("Joined")
        try await mina.send("hello", in: joined)
        try await mina.leave(left)
        try await events.wait(within: 20) { events in
            events.contains { if case .removed(let url) = $0 { url == left } else { false } }
        }
        for _ in 0..<200 where await list.channels.first?.lastMessage == nil { try await Task.sleep(for: .milliseconds(50)) }
        #expect(await list.channels.map(\.roomID) == [joined, kept])
        #expect(await list.channels.first?.lastMessage?.body == "hello")
        #expect(try await cache.channels.load().map(\.roomID) == [joined, kept])
        await list.dispose()

        // Through the change log.
        let another = try await mina.createRoom("Another")
        try await mina.leave(kept)
        let next = try ChannelListCollection(store: cache.channels, source: WithoutLiveEvents(mina.source))
        try await next.start()
        #expect(Set(await next.channels.map(\.roomID)) == [joined, another])
        #expect(Set(try await cache.channels.load().map(\.roomID)) == [joined, another])
        await next.dispose()
        try await cache.close()
    }

    @Test func aProfileChangeReachesTheUserDirectory() async throws {
        let mina = try await Synapse.newUser("mina")
        let bea = try await Synapse.newUser("bea")
        try await bea.setDisplayName("Bea")
        let cache = try openCache()
        let directory = UserDirectory(users: cache.users, source: mina.source, maxAge: .milliseconds(1))
        let events = EventLog(directory.events)
        #expect(try await directory.users(withIDs: [bea.userID]).map(\.nickname) == ["Bea"])

        try await bea.setDisplayName("Beatrice")
        try await Task.sleep(for: .milliseconds(5))
        _ = try await directory.users(withIDs: [bea.userID])  // old: refreshed in the background
        let changed = try await events.first(within: 10) { if case .changed(let users) = $0 { users } else { nil } }
        #expect(changed.map(\.nickname) == ["Beatrice"])
        #expect(try await cache.users.user(withID: bea.userID)?.nickname == "Beatrice")
        #expect(try await mina.source.users(withIDs: ["@nobody_here:localhost"]).isEmpty)
        try await cache.close()
    }

    @Test func errorsAreTypedAndNeverWipeTheCache() async throws {
        let mina = try await Synapse.newUser("mina")
        let room = try await mina.createRoom("Errors")
        try await mina.send("kept", in: room)
        let cache = try openCache()
        let collection = try MessageCollection(channelURL: room, store: cache.messages, source: WithoutLiveEvents(mina.source))
        try await collection.start()
        await collection.dispose()

        // A token the server refuses.
        let stranger = try MatrixSource(client: MatrixClient(homeserver: try Synapse.url(), accessToken: "not-a-token"))
        await #expect(throws: MatrixError.self) { try await stranger.changeLogToken(in: room) }
        do {
            _ = try await stranger.messages(in: room, .before, .max, limit: 5)
            Issue.record("a refused token must throw")
        } catch let error as MatrixError {
            #expect(error.errcode == "M_UNKNOWN_TOKEN")
        }
        // A change log token the server cannot read is too old: load afresh.
        guard case .tokenTooOld = try await mina.source.changeLog(in: room, since: "s0_not_a_token") else {
            Issue.record("a refused since token must be tokenTooOld")
            return
        }
        // A room the account is not in.
        await #expect(throws: MatrixError.self) { try await mina.source.messages(in: "!nowhere:localhost", .before, .max, limit: 5) }

        let failing = try MessageCollection(channelURL: room, store: cache.messages, source: WithoutLiveEvents(stranger))
        await #expect(throws: FlatCacheError.self) { try await failing.start() }
        #expect(await failing.messages.map(\.body) == ["kept"])  // the cached page stays shown
        #expect(try await cache.messages.load(in: room).map(\.body) == ["kept"])
        await failing.dispose()
        try await cache.close()
    }

    // MARK: - Sending (the outbox's MatrixSource)

    @Test func aTransactionIDSentTwiceMakesOneEventAndAnswersTheSameEventID() async throws {
        // Given a room, and a message to send with a request id
        let mina = try await Synapse.newUser("mina")
        let bea = try await Synapse.newUser("bea")
        let room = try await mina.createRoom("Replay", inviting: [bea])
        let requestID = UUID().uuidString
        let queued = MatrixMessage(
            eventID: "", roomID: room, sender: mina.userID, createdAt: Int64(Date().timeIntervalSince1970 * 1_000),
            msgtype: "m.text", body: "once \(requestID)")

        // When it is sent, sent again with the same request id (an answer lost), and PUT a third time by hand
        let first = try await mina.source.send(queued, requestID: requestID)
        let second = try await mina.source.send(queued, requestID: requestID)
        struct Sent: Decodable { var event_id: String }
        let raw: Sent = try await mina.client.put(
            ["rooms", room, "send", "m.room.message", requestID], body: ["msgtype": "m.text", "body": queued.body])

        // Then every answer names the same event, and the room holds it once
        #expect(!first.eventID.isEmpty)
        #expect(second == first)
        #expect(raw.event_id == first.eventID)
        let server = try await mina.serverMessages(in: room)
        #expect(server.filter { $0.body == queued.body }.count == 1)
        // The server's copy is the server's: its time, its sender, and the transaction id as the request id
        let stored = try #require(server.first { $0.eventID == first.eventID })
        #expect(first == stored)
        #expect(first.requestID == requestID)
        #expect(first.sender == mina.userID)
        // The transaction id is the sender's to see: another account's /messages does not show it.
        let seenByBea = try #require(try await bea.serverMessages(in: room).first { $0.eventID == first.eventID })
        #expect(seenByBea.requestID == nil)
        #expect(seenByBea.body == queued.body)
    }

    @Test func aMessageQueuedWhileTheServerIsStoppedIsSentOnceByTheNextSyncInANewProcess() async throws {
        // Given a room the sample's sync cached
        let mina = try await Synapse.newUser("mina")
        let room = try await mina.createRoom("Offline")
        try await mina.send("before", in: room)
        let token = mina.client.accessToken ?? ""
        let body = "written offline \(UUID().uuidString.prefix(8))"
        func tool(_ arguments: [String]) throws -> ToolRun {
            try ToolRun(arguments + ["--directory", folder.url.path], of: "flatcache-matrix", in: folder.url)
        }
        let first = try tool(["sync", "--homeserver", try Synapse.url().absoluteString, "--access-token", token])
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")

        // When the server stops, and a process queues a message and exits
        let stoppedAt = try Synapse.url().absoluteString
        try Synapse.script("stop")
        let moved: TestUser
        do {
            let send = try tool(["send", body, "--room", room, "--homeserver", stoppedAt, "--access-token", token])
            #expect(send.status == 0, "\(send.stdout)\(send.stderr)")
            #expect(send.stdout.contains("queued "), "\(send.stdout)")
            #expect(send.stdout.contains("stays queued"), "\(send.stdout)")
            // it is shown queued after the newest message, offline
            let shown = try tool(["messages", room])
            let lines = shown.stdout.split(separator: "\n").map(String.init)
            #expect(lines.last?.hasSuffix("\(body)  (queued)") == true, "\(shown.stdout)\(shown.stderr)")
            #expect(lines.dropLast().last?.hasSuffix("before") == true, "\(shown.stdout)")
        } catch {
            _ = try? Synapse.script("start")
            throw error
        }
        // and the server starts again (on another port), and a new process syncs
        moved = try mina.reconnected(to: try { try Synapse.script("start"); return try Synapse.url() }())
        let second = try tool(["sync", "--homeserver", moved.client.homeserver.absoluteString, "--access-token", token])
        #expect(second.status == 0, "\(second.stdout)\(second.stderr)")
        #expect(second.stdout.contains("sent $"), "\(second.stdout)")
        let third = try tool(["sync", "--homeserver", moved.client.homeserver.absoluteString, "--access-token", token])
        #expect(third.status == 0, "\(third.stdout)\(third.stderr)")

        // Then the room holds it exactly once
        let server = try await moved.serverMessages(in: room)
        let delivered = server.filter { $0.body == body }
        #expect(delivered.count == 1, "\(server.map(\.body))")
        // and a collection on the folder, in this process, shows it once and nothing pending
        let cache = try openCache()
        #expect(try await cache.outbox.entries().isEmpty)
        let collection = try MessageCollection(
            channelURL: room, store: cache.messages, source: WithoutLiveEvents(moved.source), outbox: cache.outbox)
        try await collection.start()
        #expect(await collection.messages.filter { $0.body == body }.map(\.eventID) == delivered.map(\.eventID))
        #expect(await collection.pending.isEmpty)
        await collection.dispose()
        try await cache.close()
        let shown = try tool(["messages", room])
        #expect(shown.stdout.components(separatedBy: body).count == 2, "\(shown.stdout)")
        #expect(!shown.stdout.contains("(queued)"))
    }

    @Test func theLiveEchoConfirmsAnOutboxEntryAndTheCollectionShowsItOnce() async throws {
        // Given a collection with the outbox, following live events
        let mina = try await Synapse.newUser("mina")
        let room = try await mina.createRoom("Echo")
        try await mina.send("before", in: room)
        let cache = try openCache()
        let collection = try MessageCollection(channelURL: room, store: cache.messages, source: mina.source, outbox: cache.outbox)
        let events = EventLog(collection.events)
        try await collection.start()

        // When a message is queued, and sent outside the outbox's loop (its answer never reaches the outbox)
        let body = "echo \(UUID().uuidString.prefix(8))"
        let entry = try await cache.outbox.send(MatrixMessage(
            eventID: "", roomID: room, sender: mina.userID, createdAt: Int64(Date().timeIntervalSince1970 * 1_000),
            msgtype: "m.text", body: body))
        _ = try await events.first(within: 10) { if case .outboxAdded(let added) = $0, added.requestID == entry.requestID { added } else { nil } }
        #expect(await collection.pending.map(\.requestID) == [entry.requestID])
        let sent = try await mina.source.send(entry.message, requestID: entry.requestID)

        // Then the echo through /sync (unsigned.transaction_id) confirms the entry
        let confirmed = try await events.first(within: 20) { event -> MatrixMessage? in
            if case .outboxConfirmed(let confirmed, let message) = event, confirmed.requestID == entry.requestID { message } else { nil }
        }
        #expect(confirmed.eventID == sent.eventID)
        #expect(confirmed.requestID == entry.requestID)
        // and the collection shows it once, as a message, nothing pending
        for _ in 0..<100 where await !collection.pending.isEmpty { try await Task.sleep(for: .milliseconds(50)) }
        #expect(await collection.pending.isEmpty)
        #expect(await collection.messages.filter { $0.body == body }.map(\.eventID) == [sent.eventID])
        #expect(try await cache.outbox.entries().isEmpty)
        // and a delivery started afterwards finds nothing to send: the room holds it once
        let delivery = OutboxDelivery(outbox: cache.outbox, sender: mina.source, store: cache.messages)
        await delivery.start()
        #expect(await deliveredAll(by: delivery, within: .seconds(30)))
        await delivery.stop()
        #expect(try await mina.serverMessages(in: room).filter { $0.body == body }.count == 1)
        #expect(await collection.messages.filter { $0.body == body }.count == 1)
        await collection.dispose()
        try await cache.close()
    }

    @Test func anAnswerLostAfterTheServerAcceptedIsRetriedWithoutASecondEvent() async throws {
        // Given a collection with the outbox, without live events (only the send's answer can confirm)
        let mina = try await Synapse.newUser("mina")
        let room = try await mina.createRoom("Lost")
        let cache = try openCache()
        let collection = try MessageCollection(
            channelURL: room, store: cache.messages, source: WithoutLiveEvents(mina.source), outbox: cache.outbox)
        try await collection.start()

        // When the first send reaches the server but its answer is lost
        let sender = LosesAnswers(mina.source, count: 1)
        let delivery = OutboxDelivery(
            outbox: cache.outbox, sender: sender, store: cache.messages,
            retry: SendRetryPolicy(initialDelay: .milliseconds(100), maximumDelay: .milliseconds(500)))
        let body = "lost answer \(UUID().uuidString.prefix(8))"
        let entry = try await cache.outbox.send(MatrixMessage(
            eventID: "", roomID: room, sender: mina.userID, createdAt: Int64(Date().timeIntervalSince1970 * 1_000),
            msgtype: "m.text", body: body))
        await delivery.start()
        #expect(await deliveredAll(by: delivery, within: .seconds(30)))
        await delivery.stop()

        // Then it was sent twice with one transaction id, and the room holds one event
        #expect(sender.calls == 2)
        let server = try await mina.serverMessages(in: room).filter { $0.body == body }
        #expect(server.count == 1)
        #expect(server.first?.requestID == entry.requestID)
        #expect(try await cache.outbox.entries().isEmpty)
        for _ in 0..<100 where await !collection.pending.isEmpty { try await Task.sleep(for: .milliseconds(50)) }
        #expect(await collection.pending.isEmpty)
        #expect(await collection.messages.filter { $0.body == body }.map(\.eventID) == server.map(\.eventID))
        #expect(try await cache.messages.load(in: room).filter { $0.body == body }.count == 1)
        await collection.dispose()
        try await cache.close()
    }

    /// Last in the file: it stops the server (the others run before it; the suite is serialized).
    @Test func theServerStoppedMidSyncLeavesTheCacheIntact() async throws {
        let mina = try await Synapse.newUser("mina")
        let room = try await mina.createRoom("Outage")
        for index in 0..<10 { try await mina.send("before \(index)", in: room) }
        let cache = try openCache()
        let collection = try MessageCollection(
            channelURL: room, store: cache.messages, source: WithoutLiveEvents(mina.source), pageSize: 10)
        try await collection.start()
        try await mina.send(150, "during", in: room, parallel: 8)
        let before = try await cache.messages.load(in: room)
        let continuity = try await cache.messages.continuity(in: room)

        // The server stops after the first page of the gap (pages of 100): the sync fails half-way.
        var source = mina.source
        source.changeLogTimelineLimit = 10
        let stopping = try MessageCollection(
            channelURL: room, store: cache.messages, source: StopsServer(source, afterPages: 1), pageSize: 10)
        let restart = { () async throws -> URL in
            try Synapse.script("start")
            return try Synapse.url()
        }
        do {
            try await stopping.start()
            Issue.record("a sync whose server stopped must throw")
        } catch {
            #expect("\(error)".contains("could not reach"), "\(error)")
        }
        #expect(await stopping.messages.map(\.eventID) == before.map(\.eventID))  // the cached page still shown
        #expect(try await cache.messages.load(in: room) == before)
        #expect(try await cache.messages.continuity(in: room) == continuity)
        _ = try await cache.flush()
        #expect(try cache.blocking.verify().allSatisfy(\.isValid))
        await stopping.dispose()
        await collection.dispose()

        // Back: the next sync completes, nothing duplicated or lost.
        let moved = try mina.reconnected(to: try await restart())
        let next = try MessageCollection(channelURL: room, store: cache.messages, source: WithoutLiveEvents(moved.source))
        try await next.start()
        let server = try await moved.serverMessages(in: room)
        #expect(server.count == 160)
        let cached = try await cache.messages.load(in: room)
        #expect(cached.map(\.eventID).sorted() == server.map(\.eventID).sorted())
        await next.dispose()
        try await cache.close()
    }
}

/// Messages in the order a collection shows them: creation time, then id
/// (the server's own order is its timeline's, which may differ within a millisecond).
private func canonical(_ messages: [MatrixMessage]) -> [MatrixMessage] {
    messages.sorted { ($0.createdAt, $0.eventID) < ($1.createdAt, $1.eventID) }
}
