import FlatCache
import Foundation
import Testing

/// Every value the built-in records' writer accepts reads back equal, and
/// every value it cannot represent is refused at save time, before anything
/// is written (issue 9, point 2).
///
/// The records come from a seeded generator: set `FLATCACHE_PROPERTY_SEED`
/// to replay a run; each test prints the seed it used.
@Suite(.timeLimit(.minutes(2))) struct RecordPropertyTests {
    let folder: TemporaryFolder

    init() throws {
        folder = try TemporaryFolder()
    }

    static let seed: UInt64 = ProcessInfo.processInfo.environment["FLATCACHE_PROPERTY_SEED"]
        .flatMap { UInt64($0, radix: 16) } ?? 0x0F1A_7CAC_4E00_0009

    static func generator(_ test: String) -> RecordGenerator {
        print("\(test): FLATCACHE_PROPERTY_SEED=\(String(seed, radix: 16))")
        return RecordGenerator(seed: seed)
    }

    /// 2^28 - 1: the most UTF-8 bytes a string field holds (4 LEB128 length bytes).
    static let longest = (1 << 28) - 1

    // MARK: - Encode, decode, equal

    @Test func randomRecordsOfEveryModelRoundTrip() throws {
        var generator = Self.generator("randomRecordsOfEveryModelRoundTrip")
        for _ in 0..<1_500 {
            try expectRoundTrip(generator.user())
            try expectRoundTrip(generator.message())
            try expectRoundTrip(generator.channel())
        }
    }

    @Test func boundaryRecordsRoundTrip() throws {
        let odd = "\0e\u{301}👩‍👩‍👧‍👦東京\u{301}"
        for integer in RecordGenerator.boundaryIntegers {
            let sender = ChatUser(userID: odd, nickname: "", profileURL: odd)
            for kind in [ChatChannel.Kind.group, .open] {
                let message = ChatMessage(
                    messageID: integer, channelURL: odd, channelKind: kind, createdAt: integer,
                    updatedAt: integer, sender: integer < 0 ? nil : sender, text: odd, customType: "", data: odd)
                try expectRoundTrip(message)
                for count in [Int.min, -1, 0, Int.max, Int(truncatingIfNeeded: integer)] {
                    try expectRoundTrip(ChatChannel(
                        channelURL: "", kind: kind, name: odd, memberCount: count, createdAt: integer, lastMessage: nil))
                    try expectRoundTrip(ChatChannel(
                        channelURL: odd, kind: kind, name: "", memberCount: count, createdAt: integer, lastMessage: message))
                }
            }
            try expectRoundTrip(ChatUser(userID: "", nickname: "", profileURL: ""))
        }
    }

    /// Decodes `record`'s bytes, expects an equal record (`==`, which equates
    /// canonically equivalent strings) and the very same bytes again.
    private func expectRoundTrip<R: CacheRecord & Equatable>(
        _ record: R, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let bytes = try record.serialize()
        let decoded = try R(serializedData: bytes)
        #expect(decoded == record, sourceLocation: sourceLocation)
        #expect(try decoded.serialize() == bytes, sourceLocation: sourceLocation)
    }

    // MARK: - Through a cache folder

    @Test func randomRecordsReadBackFromANewCacheOnTheSameFolder() throws {
        var generator = Self.generator("randomRecordsReadBackFromANewCacheOnTheSameFolder")
        let channels = (0..<150).map { generator.channel(url: generator.key($0)) }
        let users = (0..<150).map { generator.user(id: generator.key($0)) }
        let channelURLs = (0..<4).map { generator.key($0) }
        let messages = (0..<400).map { generator.message(in: channelURLs[$0 % channelURLs.count]) }

        let writer = try ChatCache(directory: folder.url, configuration: Configuration(maxMessagesPerChannel: 1_000))
        try writer.channels.blocking.save(channels)
        try writer.users.blocking.save(users)
        try writer.messages.blocking.save(messages)

        let reader = try ChatCache(directory: folder.url, configuration: Configuration(maxMessagesPerChannel: 1_000))
        #expect(try reader.channels.blocking.load() == Self.expectedChannels(channels))
        #expect(try reader.users.blocking.load() == users.sorted { Self.byteOrder($0.userID, $1.userID) })
        for url in channelURLs {
            #expect(try reader.messages.blocking.load(in: url) == Self.expectedMessages(messages, in: url))
        }
    }

    @Test func aNegativeMemberCountReadsBackFromANewCache() throws {
        let channels = [Int.min, -1, 0, Int.max].map {
            ChatChannel(channelURL: "members \($0)", kind: .group, name: "", memberCount: $0, createdAt: Int64($0 % 1_000))
        }
        try ChatCache(directory: folder.url).channels.blocking.replace(with: channels)
        #expect(try ChatCache(directory: folder.url).channels.blocking.load() == Self.expectedChannels(channels))
    }

    /// Group channels in canonical order: last message time descending, then URL bytes.
    static func expectedChannels(_ channels: [ChatChannel]) -> [ChatChannel] {
        channels.filter { $0.kind == .group }.sorted {
            $0.lastMessageAt != $1.lastMessageAt
                ? $0.lastMessageAt > $1.lastMessageAt : byteOrder($0.channelURL, $1.channelURL)
        }
    }

    /// A channel's sent group messages, the last of each id winning, by creation time then id.
    static func expectedMessages(_ messages: [ChatMessage], in url: String) -> [ChatMessage] {
        var byID = [Int64: ChatMessage]()
        for message in messages where message.channelURL == url && message.messageID != 0 && message.channelKind == .group {
            byID[message.messageID] = message
        }
        return byID.values.sorted { ($0.createdAt, $0.messageID) < ($1.createdAt, $1.messageID) }
    }

    static func byteOrder(_ a: String, _ b: String) -> Bool {
        a.utf8.lexicographicallyPrecedes(b.utf8)
    }

    // MARK: - The longest string field

    /// One case of each size, ~256 MiB each: the longest string reads back
    /// through a folder; one byte more is refused by every model and every
    /// save, and the folder stays byte for byte as it was.
    @Test func theLongestStringRoundTripsAndOneByteMoreIsRefusedBeforeAnythingIsWritten() throws {
        // ASCII, so that `==` compares bytes (a non-ASCII string of 256 MiB compares for seconds).
        let longestText = Self.ascii("a", count: Self.longest)
        let longest = ChatMessage(messageID: 1, channelURL: "long", createdAt: 1, text: longestText)
        let bytes = try longest.serialize()
        #expect(try ChatMessage(serializedData: bytes) == longest)
        // Over the default size limit (256 MiB) on its own: no limit here, or a sweep would remove it.
        let unlimited = Configuration(sizeLimit: nil)
        try ChatCache(directory: folder.url, configuration: unlimited).messages.blocking.save([longest])
        #expect(try ChatCache(directory: folder.url, configuration: unlimited).messages.blocking.load(in: "long") == [longest])

        let tooLong = Self.ascii("b", count: Self.longest + 1)
        let refusal = "is 268435456 bytes; a string field holds at most 268435455"
        try expectEncodingRefused(ChatUser(userID: "u", nickname: tooLong), reason: "nickname \(refusal)")
        let message = ChatMessage(messageID: 2, channelURL: "b-channel", createdAt: 2, text: tooLong)
        try expectEncodingRefused(message, reason: "text \(refusal)")
        var nested = ChatMessage(messageID: 3, channelURL: "c", createdAt: 3, text: "")
        nested.sender = ChatUser(userID: "u", nickname: "", profileURL: tooLong)
        try expectEncodingRefused(nested, reason: "sender.profileURL \(refusal)")
        let channel = ChatChannel(
            channelURL: "c", kind: .group, name: "", memberCount: 1, createdAt: 0, lastMessage: nested)
        try expectEncodingRefused(channel, reason: "lastMessage.sender.profileURL \(refusal)")
        try expectEncodingRefused(
            ChatChannel(channelURL: tooLong, kind: .group, name: "", memberCount: 1, createdAt: 0),
            reason: "channelURL \(refusal)")

        // A cache with content in two channels, a channel list and users (not the long message: snapshots stay quick).
        let small = folder.appending("small")
        let cache = try ChatCache(directory: small)
        try cache.messages.blocking.save([
            ChatMessage(messageID: 1, channelURL: "a-channel", createdAt: 1, text: "a"),
            ChatMessage(messageID: 1, channelURL: "b-channel", createdAt: 1, text: "b"),
        ])
        try cache.channels.blocking.save([ChatChannel(channelURL: "a-channel", kind: .group, name: "A", memberCount: 1, createdAt: 1)])
        try cache.users.blocking.save([ChatUser(userID: "u", nickname: "U")])
        let fresh = ChatMessage(messageID: 2, channelURL: "a-channel", createdAt: 2, text: "would change a-channel")
        let user = ChatUser(userID: "v", nickname: tooLong)
        let saves: [(String, () throws(FlatCacheError) -> SaveResult)] = [
            // "a-channel" is written before "b-channel": its change must not land either.
            ("messages.save over two channels", { () throws(FlatCacheError) in try cache.messages.blocking.save([fresh, message]) }),
            ("messages.save", { () throws(FlatCacheError) in try cache.messages.blocking.save([message]) }),
            ("messages.replace", { () throws(FlatCacheError) in try cache.messages.blocking.replace([message], in: "b-channel") }),
            ("messages.applyChangeLog", { () throws(FlatCacheError) in
                try cache.messages.blocking.applyChangeLog(updated: [message], deletedMessageIDs: [1], in: "b-channel")
            }),
            ("channels.save", { () throws(FlatCacheError) in try cache.channels.blocking.save([channel]) }),
            ("channels.replace", { () throws(FlatCacheError) in try cache.channels.blocking.replace(with: [channel]) }),
            ("users.save", { () throws(FlatCacheError) in try cache.users.blocking.save([user]) }),
        ]
        for (name, save) in saves {
            let before = try Self.snapshot(small)
            do {
                let result = try save()
                Issue.record("\(name) was not refused: \(result)")
            } catch {
                guard case .serializationFailed(_, let underlying) = error, underlying is RecordEncodingError else {
                    Issue.record("\(name) threw \(error), not a RecordEncodingError")
                    continue
                }
            }
            #expect(try Self.snapshot(small) == before, "\(name) changed the folder")
        }
    }

    private func expectEncodingRefused(
        _ record: some CacheRecord, reason: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        do {
            _ = try record.serialize()
            Issue.record("\(type(of: record)) was encoded; expected \(reason)", sourceLocation: sourceLocation)
        } catch let error as RecordEncodingError {
            #expect(error.reason == reason, sourceLocation: sourceLocation)
            #expect(error.description == "Cannot encode record: \(reason).", sourceLocation: sourceLocation)
        }
    }

    /// `count` copies of an ASCII character, made with `memset` (`String(repeating:count:)` takes seconds for 256 MiB).
    static func ascii(_ character: Character, count: Int) -> String {
        let byte = character.asciiValue ?? UInt8(ascii: "?")
        return String(unsafeUninitializedCapacity: count) { buffer in
            if let start = buffer.baseAddress { memset(start, Int32(byte), count) }
            return count
        }
    }

    /// Every entry below `root` (hidden ones included): a file's bytes, or `nil` for a folder.
    static func snapshot(_ root: URL) throws -> [String: Data?] {
        var entries = [String: Data?]()
        guard let walker = FileManager.default.enumerator(atPath: root.path) else { return entries }
        while let path = walker.nextObject() as? String {
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: root.appendingPathComponent(path).path, isDirectory: &isDirectory)
            entries[path] = isDirectory.boolValue ? .some(nil) : try Data(contentsOf: root.appendingPathComponent(path))
        }
        return entries
    }
}
