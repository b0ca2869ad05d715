import FlatCache

/// Steps 4 to 6: back online, the senders, and a huge gap.
extension Story {
    /// Step 4: online again, `sync()` catches both collections up.
    func reconnect(_ list: Channels, _ collection: Messages) async throws {
        StoryLines.heading(4, "Reconnect: sync()")
        await server.setOffline(false)
        StoryLines.say("server", "online")
        StoryLines.say("call", "channelList.sync()")
        try await list.sync()
        try await transcript.expect(.list, "moved", "added", "removed")
        StoryLines.say("call", "collection.sync()")
        try await collection.sync()
        // The change log first (an edit and a delete of shown messages), then the gap after the newest shown.
        try await transcript.expect(.messages, "updated", "deleted", "added")
    }

    /// Step 5: the senders of the messages shown, through a user directory.
    func resolveSenders(of collection: Messages) async throws {
        StoryLines.heading(5, "Senders through the user directory")
        let shown = await collection.messages
        let cachedIDs = Set(try await cache.users.load().map(\.userID))
        let callsBefore = await server.calls.count
        let directory = UserDirectory(users: cache.users, source: server)
        transcript.follow(directory.events, from: .users, describe: StoryLines.describe)
        StoryLines.say("call", "directory.users(withIDs:) for the senders of the \(shown.count) messages shown")
        let senders = try await directory.users(withIDs: shown.compactMap { $0.sender?.userID })
        let fromCache = senders.filter { cachedIDs.contains($0.userID) }
        let fetched = senders.filter { !cachedIDs.contains($0.userID) }
        let fetchedIDs = Set(fetched.map(\.userID))
        let batches = await server.calls.dropFirst(callsBefore).filter { call in
            if case .users(let ids) = call { ids.contains(where: fetchedIDs.contains) } else { false }
        }
        StoryLines.say(
            "users",
            "\(StoryLines.count(senders.count, "sender")): \(fromCache.count) from the cache (\(StoryLines.names(fromCache))), "
                + "\(fetched.count) fetched in \(batches.count == 1 ? "one batch" : "\(batches.count) batches") "
                + "(\(StoryLines.names(fetched)))")
        // The batch and the refresh of the cached profiles run side by side: either may end first.
        try await transcript.expect(.users, "fetched", "changed", inAnyOrder: true)
    }

    /// Step 6: a long time offline leaves a huge gap; the server's newest page replaces the view and the cache.
    func hugeGap(_ list: Channels, _ collection: Messages) async throws {
        StoryLines.heading(6, "A long time offline: a huge gap")
        await server.setOffline(true)
        await server.send(StorySeed.messages(73...472))
        await server.setOffline(false)
        StoryLines.say("server", "offline, 400 new messages in General (#73…#472), online again")
        StoryLines.say("call", "collection.sync()  (hugeGapThreshold \(collection.hugeGapThreshold))")
        try await collection.sync()
        try await transcript.expect(.messages, "hugeGap", "replaced")
        let cached = try await cache.messages.load(in: StorySeed.general).count
        StoryLines.say("cache", "General holds the newest page alone: \(cached) messages")
        await collection.dispose()
        await list.dispose()
        StoryLines.say("call", "dispose() the collection and the channel list")
    }

    /// The summary line, once no event is left unexpected; closes the cache.
    func finish() async throws {
        try await transcript.expectNoMore()
        let events = await transcript.entries.count
        let cached = try await cache.messages.load(in: StorySeed.general).count
        try await cache.close()
        print("\nDone · \(events) events, \(cached) messages cached in General, cache closed.")
    }
}
