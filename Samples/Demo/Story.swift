import FlatCache
import FlatCacheTesting

/// The steps of `flatcache-demo collection`, in order: each prints a
/// heading, what it does, and the events that follow (see ``Transcript``).
struct Story {
    /// The cache the story's app keeps.
    typealias Cache = ChatCache<ChatMessage, ChatChannel, ChatUser>
    /// General's messages, as the chat view shows them.
    typealias Messages = MessageCollection<ChatMessage>
    /// The user's channels, as the channel list shows them.
    typealias Channels = ChannelListCollection<ChatChannel>

    /// The app's cache, emptied before the story.
    let cache: Cache
    /// The chat server, scripted step by step.
    let server: SimulatedChatServer
    /// The events of every collection and directory, printed step by step.
    let transcript = Transcript()

    /// Gives the server its users, channels and General's first 60 messages.
    func seedServer() async {
        await server.add(users: StorySeed.users)
        await server.update(channels: StorySeed.channels)
        await server.send(StorySeed.messages(1...60))
        StoryLines.say("server", "\(StorySeed.users.count) users, \(StorySeed.channels.count) channels, 60 messages in General")
    }

    /// Step 1: online, both collections start on an empty cache and fill it.
    func firstRunOnline() async throws {
        StoryLines.heading(1, "First run, online: the cache fills")
        let list = try channelList()
        StoryLines.say("call", "channelList.start()")
        try await list.start()
        try await transcript.expect(.list, "cachedList", "replaced")
        let collection = try messageCollection()
        StoryLines.say("call", "collection.start()")
        try await collection.start()
        try await transcript.expect(.messages, "cachedPage", "replaced")
        // What an app saves at sign-in: step 5 finds these in the cache.
        try await cache.users.save(StorySeed.signedIn)
        StoryLines.say("call", "cache.users.save([\(StoryLines.names(StorySeed.signedIn))]) at sign-in")
        await list.dispose()
        await collection.dispose()
        StoryLines.say("call", "dispose() both")
    }

    /// Step 2: offline, new collections show the cache at once, and their start fails.
    ///
    /// - Returns: The channel list and the collection; the next steps sync them.
    func offlineStart() async throws -> (Channels, Messages) {
        StoryLines.heading(2, "Offline start from the cache")
        await server.setOffline(true)
        StoryLines.say("server", "offline")
        let list = try channelList()
        StoryLines.say("call", "channelList.start()")
        let listError = try await failure("channelList.start()") { try await list.start() }
        try await transcript.expect(.list, "cachedList")
        StoryLines.say("threw", "\(listError)")
        let collection = try messageCollection()
        StoryLines.say("call", "collection.start()")
        let error = try await failure("collection.start()") { try await collection.start() }
        try await transcript.expect(.messages, "cachedPage")
        StoryLines.say("threw", "\(error)")
        return (list, collection)
    }

    /// Step 3: while the app is offline, the server changes; the app hears none of it.
    func changesWhileOffline() async {
        StoryLines.heading(3, "Meanwhile, on the server")
        let general = StorySeed.general
        await server.send(StorySeed.messages(61...72))
        StoryLines.say("server", "12 new messages in General (#61…#72)")
        await server.edit(messageID: 58, in: general, text: "Ben's message #58, edited", updatedAt: StorySeed.start + 80 * 60_000)
        await server.delete(messageID: 59, in: general)
        StoryLines.say("server", "#58 edited, #59 deleted")
        await server.leave(channelURL: StorySeed.books)
        await server.update(channels: [StorySeed.climbing])
        StoryLines.say("server", "the user left Books and joined Climbing")
        await server.add(users: [ChatUser(userID: "ben", nickname: "Benjamin")])
        StoryLines.say("server", "Ben renamed himself Benjamin")
    }

    // MARK: - Helpers

    /// A channel list over the cache, its events followed.
    func channelList() throws(FlatCacheError) -> Channels {
        let list = try Channels(store: cache.channels, source: server)
        transcript.follow(list.events, from: .list, describe: StoryLines.describe)
        return list
    }

    /// A collection of General's messages over the cache, from now, its events followed.
    func messageCollection() throws(FlatCacheError) -> Messages {
        let collection = try Messages(channelURL: StorySeed.general, store: cache.messages, source: server)
        transcript.follow(collection.events, from: .messages, describe: StoryLines.describe)
        return collection
    }

    /// The error `body` throws; the story stops when it succeeds.
    ///
    /// - Throws: ``StoryError/didNotFail(_:)``.
    func failure(_ call: String, _ body: () async throws -> Void) async throws(StoryError) -> any Error {
        do {
            try await body()
        } catch {
            return error
        }
        throw .didNotFail(call)
    }
}
