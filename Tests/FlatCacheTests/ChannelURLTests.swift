import FlatCache
import Foundation
import Testing

/// Any channel URL maps to its own file inside `messages/`.
@Suite struct ChannelURLTests {
    static let hostile = [
        "../../etc/passwd", "/etc/passwd", "a/b", "..", ".", "a\u{0}b", "~root", "C:\\Windows\\system32",
        String(repeating: "x", count: 10_000), "🙂💬", "Channel", "channel", "CHANNEL",
        "caf\u{E9}", "cafe\u{301}",  // equal as Swift strings, different bytes
        " ", "\n", "%2e%2e%2f", "sendbird_group_channel_1",
    ]

    let folder: TemporaryFolder
    let cache: ChatCache<ChatMessage, ChatChannel, ChatUser>

    init() throws {
        folder = try TemporaryFolder()
        cache = try ChatCache(directory: folder.appending("cache"))
    }

    @Test func everyURLGetsItsOwnSafeFileInsideTheCache() throws {
        // Given one message per hostile URL, each with its own id
        let messages = Self.hostile.enumerated().map { Fixtures.message(Int64($0 + 1), at: 1_000, in: $1) }

        // When they are saved
        let result = try cache.messages.blocking.save(messages)

        // Then each went to its own 64-hex-digit file inside messages/
        #expect(result.filesWritten == Self.hostile.count)
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.appending("cache/messages").path)
        let dataFiles = names.filter { $0.hasSuffix(".lines") }
        #expect(dataFiles.count == Self.hostile.count)
        #expect(dataFiles.allSatisfy { $0.count == 70 && $0.dropLast(6).allSatisfy(\.isHexDigit) })
        // and nothing was written outside the cache folder
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path) == ["cache"])

        // and each loads back exactly its own message
        for message in messages {
            #expect(try cache.messages.blocking.load(in: message.channelURL) == [message])
        }
    }

    @Test func theSameURLAlwaysMapsToTheSameFile() throws {
        for url in Self.hostile {
            try cache.messages.blocking.save([Fixtures.message(1, at: 1, in: url)])
            try cache.messages.blocking.save([Fixtures.message(2, at: 2, in: url)])
            #expect(try cache.messages.blocking.load(in: url).map(\.messageID) == [1, 2])
        }
    }
}
