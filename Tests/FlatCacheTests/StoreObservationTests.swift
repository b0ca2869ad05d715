import Foundation
import Testing

@testable import FlatCache

/// The stores' change streams: the value now, then each change, to any
/// number of listeners, from any store instance on the folder; a listener
/// that stops leaves the folder's hub.
@Suite struct StoreObservationTests {
    typealias Cache = ChatCache<ChatMessage, ChatChannel, ChatUser>

    let folder = try! TemporaryFolder()
    let channel = "trip"

    func open() async throws -> Cache {
        try await Cache.open(directory: folder.url)
    }

    func message(_ id: Int64) -> ChatMessage {
        ChatMessage(messageID: id, channelURL: channel, createdAt: id * 1_000, text: "message \(id)")
    }

    static func ids(_ values: [[ChatMessage]]) -> [[Int64]] { values.map { $0.map(\.messageID) } }

    @Test func twoListenersEachGetTheCurrentValueFirstThenEveryChangeOnce() async throws {
        // Given two listeners on a channel that holds two messages
        let cache = try await open()
        try await cache.messages.save([message(1), message(2)])
        let first = ValueLog(cache.messages.observe(in: channel))
        let second = ValueLog(cache.messages.observe(in: channel))

        // When five messages are saved one at a time, each once both saw the one before
        var expected: [[Int64]] = [[1, 2]]
        for id in Int64(3)...7 {
            for log in [first, second] { try await log.wait { $0.last?.count == Int(id) - 1 } }
            try await cache.messages.save([message(id)])
            expected.append(Array(1...id))
        }
        for log in [first, second] { try await log.wait { $0.last?.count == 7 } }
        try await cache.flush()  // write-behind lands: nothing changed, so nothing new is told
        try await Task.sleep(for: .milliseconds(50))

        // Then each listener got the current value, then every change, each once
        #expect(Self.ids(first.all) == expected)
        #expect(Self.ids(second.all) == expected)
    }

    @Test func blockingCallsAndASecondCacheOnTheFolderReachAListener() async throws {
        // Given a listener on a channel of one cache, and a second cache on the folder
        let cache = try await open()
        let other = try await open()
        let log = ValueLog(cache.messages.observe(in: channel))
        try await log.wait { $0.count == 1 }
        #expect(log.all.first?.isEmpty == true)

        // When a blocking save goes through the first, then an async save and a change log through the second
        let first = message(1)
        _ = try await offThePool { try cache.messages.blocking.save([first]) }
        try await log.wait { $0.last?.count == 1 }
        try await other.messages.save([message(2)])  // write-behind: reaches the first cache once on disk
        try await log.wait { $0.last?.count == 2 }
        try await other.messages.applyChangeLog(updated: [], deletedMessageIDs: [1], in: channel)

        // Then the listener sees each, in order
        try await log.wait { Self.ids($0).last == [2] }
        #expect(Self.ids(log.all) == [[], [1], [1, 2], [2]])
    }

    @Test func theChannelListAndTheUsersHaveStreamsToo() async throws {
        let cache = try await open()
        let channels = ValueLog(cache.channels.observe())
        let users = ValueLog(cache.users.observe())
        try await channels.wait { $0.count == 1 }
        try await users.wait { $0.count == 1 }

        try await cache.channels.save([Fixtures.channel("trip", lastMessageAt: 5)])
        try await cache.users.save([ChatUser(userID: "ann", nickname: "Ann")])

        try await channels.wait { $0.last?.map(\.channelURL) == ["trip"] }
        try await users.wait { $0.last?.map(\.userID) == ["ann"] }
        #expect(channels.all.count == 2 && users.all.count == 2)
    }

    @Test func aCancelledListenerAndABrokenLoopLeaveTheHub() async throws {
        // Given a listener iterating in a task
        let cache = try await open()
        let hub = cache.engine.hub
        #expect(hub.listenerCount == 0)
        let log = ValueLog(cache.messages.observe(in: channel))
        try await log.wait { $0.count == 1 }
        #expect(hub.listenerCount == 1)

        // When its task is cancelled, the hub forgets it
        await log.stop()
        try await waitUntil("the cancelled listener left") { hub.listenerCount == 0 }

        // And a loop that breaks leaves it too
        for try await _ in cache.messages.observe(in: channel) { break }
        try await waitUntil("the broken loop's listener left") { hub.listenerCount == 0 }
        #expect(hub.listenerCount == 0)

        // And later changes still reach a new listener
        let again = ValueLog(cache.messages.observe(in: channel))
        try await cache.messages.save([message(1)])
        try await again.wait { $0.last?.count == 1 }
    }

    @Test func anEmptyChannelURLThrowsAtOnce() async throws {
        let cache = try await open()
        await #expect {
            for try await _ in cache.messages.observe(in: "") {}
        } throws: { error in
            if case FlatCacheError.emptyChannelURL = error { true } else { false }
        }
    }
}
