import FlatCache
import Foundation
import Testing

/// One `ChatCache` shared by many tasks: nothing lost, nothing torn.
@Suite struct ConcurrencyTests {
    let folder: TemporaryFolder
    let recorder = LogRecorder()
    let cache: ChatCache<ChatMessage, ChatChannel, ChatUser>

    init() throws {
        folder = try TemporaryFolder()
        cache = try ChatCache(
            directory: folder.url,
            configuration: Configuration(maxMessagesPerChannel: 10_000, logger: recorder.logger))
    }

    @Test func concurrentSavesToOneChannelLoseNoMessage() async throws {
        // Given 8 tasks each upserting 25 messages of their own, one at a time, into one channel
        let cache = self.cache
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for index in 0..<25 {
                        let id = Int64(worker * 100 + index + 1)
                        try await cache.messages.save([Fixtures.message(id, at: id)])
                    }
                }
            }
            try await group.waitForAll()
        }

        // Then every save's read-merge-write saw the others: all 200 are there
        #expect(try await cache.messages.load(in: Fixtures.channelURL).count == 200)
        #expect(recorder.entries.isEmpty)
    }

    @Test func loadsDuringReplacesSeeOneWholeVersion() async throws {
        // Given writers replacing a channel with whole versions (every message text names its version)
        let cache = self.cache
        let url = Fixtures.channelURL
        func version(_ number: Int) -> [ChatMessage] {
            (1...20).map { Fixtures.message(Int64($0), at: Int64($0), text: "version \(number)") }
        }
        try await cache.messages.replace(version(0), in: url)

        // When readers load at the same time
        let torn = try await withThrowingTaskGroup(of: Int.self) { group in
            for writer in 0..<2 {
                group.addTask {
                    for number in 1...40 { try await cache.messages.replace(version(writer * 100 + number), in: url) }
                    return 0
                }
            }
            for _ in 0..<4 {
                group.addTask {
                    var torn = 0
                    for _ in 0..<60 {
                        let texts = Set(try await cache.messages.load(in: url).map(\.text))
                        if texts.count != 1 { torn += 1 }  // empty (a "corrupt" miss) or mixed
                    }
                    return torn
                }
            }
            return try await group.reduce(0, +)
        }

        // Then every load saw exactly one version, nothing was taken for corrupt,
        // and the channel ends as the last replace of one of the writers
        #expect(torn == 0)
        let final = Set(try await cache.messages.load(in: url).map(\.text))
        #expect(final == ["version 40"] || final == ["version 140"], "ended as \(final)")
        #expect(recorder.entries.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: folder.appending("quarantine").path))
    }

    @Test func differentChannelsAndStoresInParallel() async throws {
        let cache = self.cache
        try await withThrowingTaskGroup(of: Void.self) { group in
            for channel in 0..<16 {
                group.addTask {
                    let url = "channel-\(channel)"
                    try await cache.messages.save(Fixtures.messages(30, in: url))
                    try await cache.channels.save([Fixtures.channel(url, lastMessageAt: Int64(channel))])
                    try await cache.users.save([ChatUser(userID: "user-\(channel)", nickname: "\(channel)")])
                    try await cache.messages.applyChangeLog(updated: [], deletedMessageIDs: [1], in: url)
                }
            }
            try await group.waitForAll()
        }
        #expect(try await cache.channels.load().count == 16)
        #expect(try await cache.users.load().count == 16)
        for channel in 0..<16 {
            #expect(try await cache.messages.load(in: "channel-\(channel)").count == 29)
        }
    }

    @Test func twoInstancesOnOneFolderAreAsSafeAsOne() async throws {
        // Given two ChatCache objects opened on the same folder (one by a relative-looking path)
        let other = try ChatCache(
            directory: folder.url.appendingPathComponent("messages/..", isDirectory: true),
            configuration: Configuration(maxMessagesPerChannel: 10_000, logger: recorder.logger))
        let caches = [cache, other]

        // When both upsert into one channel at once
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for index in 0..<25 {
                        let id = Int64(worker * 100 + index + 1)
                        try await caches[worker % 2].messages.save([Fixtures.message(id, at: id)])
                        _ = try await caches[(worker + 1) % 2].messages.load(in: Fixtures.channelURL)
                    }
                }
            }
            try await group.waitForAll()
        }

        // Then, once both flushed, nothing was lost and nothing was taken for corrupt
        try await cache.flush()
        try await other.flush()
        #expect(try await other.messages.load(in: Fixtures.channelURL).count == 200)
        #expect(recorder.entries.isEmpty)
    }

    @Test func theCacheIsUsableFromADetachedTask() async throws {
        // Compiles only because ChatCache is Sendable.
        let cache = self.cache
        let count = try await Task.detached {
            try await cache.users.save([Fixtures.mina])
            return try await cache.users.load().count
        }.value
        #expect(count == 1)
    }
}
