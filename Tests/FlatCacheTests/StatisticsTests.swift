import Foundation
import Testing

@testable import FlatCache

/// What `statistics()` counts while write-behind holds saves not yet written.
@Suite struct StatisticsTests {
    let folder = try! TemporaryFolder()

    @Test func memoryBytesCountSavesWaitingForWriteBehind() async throws {
        // Given a cache whose writes wait a minute, and messages saved into channels never read
        let cache = try ChatCache(directory: folder.url, configuration: Configuration(writeDelay: .seconds(60), sizeLimit: nil))
        let (channels, perChannel) = (20, 30)
        for channel in 0..<channels {
            let url = "channel-\(channel)"
            try await cache.messages.save((1...perChannel).map {
                ChatMessage(messageID: Int64($0), channelURL: url, createdAt: Int64($0), text: String(repeating: "x", count: 100))
            })
        }

        // When the statistics are read before anything is written
        let waiting = try await cache.statistics()

        // Then memory counts the waiting records: at least their text
        #expect(waiting.memoryBytes >= channels * perChannel * 100, "\(waiting)")
        #expect(waiting.memoryEntries == channels)
        try await cache.flush()
        #expect(try await cache.statistics().messages == channels * perChannel)
    }

    @Test func diskBytesAndFilesCountEveryFileInTheFolderOnce() async throws {
        // Given a folder with messages in 3 channels, a change log token (a continuity file) in one,
        // the channel list, a stray file among the messages, and a quarantined folder and file
        let cache = try ChatCache(directory: folder.url, configuration: Configuration(writeDelay: .zero, sizeLimit: nil))
        for channel in 0..<3 {
            try await cache.messages.save((1...5).map {
                ChatMessage(messageID: Int64(channel * 10 + $0), channelURL: "c\(channel)", createdAt: Int64($0), text: "m\($0)")
            })
        }
        try await cache.messages.setChangeLogToken("token-1", in: "c1")
        try await cache.channels.save([ChatChannel(channelURL: "c0", kind: .group, name: "c0", memberCount: 2, createdAt: 0)])
        try await cache.close()
        let messages = folder.url.appendingPathComponent("messages")
        try Data("stray".utf8).write(to: messages.appendingPathComponent("notes.txt"))
        let quarantine = folder.url.appendingPathComponent("quarantine")
        try FileManager.default.createDirectory(at: quarantine.appendingPathComponent("incident"), withIntermediateDirectories: true)
        try Data(repeating: 7, count: 300).write(to: quarantine.appendingPathComponent("incident/a.lines"))
        try Data(repeating: 8, count: 40).write(to: quarantine.appendingPathComponent("b.lines"))

        // When the statistics scan the folder
        let statistics = try await ChatCache(directory: folder.url, configuration: Configuration(sizeLimit: nil)).statistics()

        // Then they count every regular file once, as a walk of the folder does
        var (bytes, files) = (0, 0)
        let walk = FileManager.default.enumerator(at: folder.url, includingPropertiesForKeys: [.isRegularFileKey, .fileSizeKey])!
        for case let url as URL in walk {
            let values = try url.resourceValues(forKeys: [.isRegularFileKey, .fileSizeKey])
            guard values.isRegularFile == true else { continue }
            (bytes, files) = (bytes + values.fileSize!, files + 1)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: messages.path).contains { $0.hasSuffix(".continuity") })
        #expect(statistics.diskBytes == bytes)
        #expect(statistics.diskFiles == files)
        #expect(statistics.quarantinedBytes == 340)
        #expect(statistics.channelsWithMessages == 3)
    }

    @Test func countsIncludeChangesWaitingForWriteBehind() async throws {
        // Given a folder another cache wrote: 2 channels listed, 2 users, 10 messages in "old"
        let channel = { (url: String, at: Int64) in
            ChatChannel(channelURL: url, kind: .group, name: url, memberCount: 2, createdAt: 0,
                lastMessage: ChatMessage(messageID: at, channelURL: url, createdAt: at, text: "last"))
        }
        let message = { (id: Int64, url: String) in ChatMessage(messageID: id, channelURL: url, createdAt: id, text: "m\(id)") }
        let user = { (id: String) in ChatUser(userID: id, nickname: id, profileURL: "") }
        let writer = try ChatCache(directory: folder.url, configuration: Configuration(writeDelay: .zero, sizeLimit: nil))
        try await writer.channels.save([channel("old", 10), channel("quiet", 5)])
        try await writer.users.save([user("ann"), user("bob")])
        try await writer.messages.save((1...10).map { message($0, "old") })
        try await writer.close()

        // When a cache whose writes wait a minute (and which never read the files) changes every kind
        let cache = try ChatCache(directory: folder.url, configuration: Configuration(writeDelay: .seconds(60), sizeLimit: nil))
        try await cache.users.save([user("cid"), user("dan"), user("eve")])
        try await cache.channels.save([channel("new", 20)])
        try await cache.messages.save((1...7).map { message($0, "new") })
        try await cache.messages.save((11...12).map { message($0, "old") })
        try await cache.messages.removeAll(in: "quiet-but-never-cached")
        let waiting = try await cache.statistics()

        // Then the counts are what the cache holds, the waiting changes included
        #expect(waiting.users == 5, "\(waiting)")
        #expect(waiting.channels == 3)
        #expect(waiting.channelsWithMessages == 2)
        #expect(waiting.messages == 12 + 7)
        // and the same once they are written
        try await cache.flush()
        let written = try await cache.statistics()
        #expect((written.users, written.channels, written.channelsWithMessages, written.messages) == (5, 3, 2, 19))
        // and a channel removed while its removal waits is not counted
        try await cache.messages.removeAll(in: "new")
        let removed = try await cache.statistics()
        #expect((removed.channelsWithMessages, removed.messages) == (1, 12))
        try await cache.close()
    }
}
