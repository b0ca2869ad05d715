import FlatCache
import Foundation
import Testing

/// A change log into a channel memory holds is appended to the file and
/// applied to memory's records in place once the write lands, instead of
/// to a copy of the channel (issue 33). Memory must then say exactly what
/// the file says: this instance's loads, a new instance's and a model's
/// agree after every round of random edits (some moving a message),
/// deletions, new messages older than the newest, ties in one millisecond,
/// and change logs that pass the retention limit.
@Suite struct InPlaceEditsTests {
    typealias Cache = ChatCache<ChatMessage, ChatChannel, ChatUser>
    let folder: TemporaryFolder
    let url = Fixtures.channelURL
    let limit = 30

    init() throws {
        folder = try TemporaryFolder()
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func memoryAfterAChangeLogIsWhatTheFileSays(seed: UInt64) async throws {
        var random = SeededGenerator(seed: seed)
        let cache = try Cache(directory: folder.url, configuration: Configuration(maxMessagesPerChannel: limit))
        var model = [Int64: ChatMessage]()
        for message in Fixtures.messages(24) { model[message.messageID] = message }
        _ = try await cache.messages.save(Array(model.values))
        try await cache.flush()
        _ = try await cache.messages.load(in: url)  // memory holds the channel from here on
        var nextID: Int64 = 1_000
        var appendedRounds = 0
        for round in 0..<40 {
            // Edits of cached messages, new ones (some older than the newest, some in one millisecond with
            // another), and deletions of cached ids, absent ids, and ids the same change log edits.
            let cached = model.keys.sorted()
            var updated = [ChatMessage]()
            for id in cached.shuffled(using: &random).prefix(Int.random(in: 0...4, using: &random)) {
                var message = model[id]!
                message.text = "round \(round) edit of \(id)"
                message.updatedAt = Int64(round + 1)
                // Now and then an edit that moves the message (its place in canonical order changes).
                if Int.random(in: 0..<5, using: &random) == 0 { message.createdAt = Int64.random(in: 0...nextID * 1_000, using: &random) }
                updated.append(message)
            }
            for _ in 0..<Int.random(in: 0...3, using: &random) {
                nextID += 1
                let at = Bool.random(using: &random) ? model[cached.randomElement(using: &random)!]!.createdAt : nextID * 1_000
                updated.append(Fixtures.message(nextID, at: at, in: url, text: "new \(nextID)"))
            }
            var deleted = Set(cached.shuffled(using: &random).prefix(Int.random(in: 0...2, using: &random)))
            if Bool.random(using: &random) { deleted.insert(-Int64(round) - 1) }
            if let edited = updated.first, Int.random(in: 0..<4, using: &random) == 0 { deleted.insert(edited.messageID) }

            try await cache.messages.applyChangeLog(updated: updated, deletedMessageIDs: Array(deleted), in: url)
            try await cache.flush()
            for message in updated { model[message.messageID] = message }
            for id in deleted { model[id] = nil }
            let expected = Array(model.values.sorted { CanonicalOrder.precedes($0, $1) }.suffix(limit))
            // Retention forgets what it leaves out: the model does too.
            model = Dictionary(uniqueKeysWithValues: expected.map { ($0.messageID, $0) })

            let hits = try await cache.statistics().memoryHits
            let fromMemory = try await cache.messages.load(in: url)
            // Memory took the change (in place, or the compaction's records): the load read no file.
            #expect(try await cache.statistics().memoryHits == hits + 1, "round \(round): the load read the file")
            let fromFile = try await Cache(directory: folder.url, configuration: Configuration(maxMessagesPerChannel: limit))
                .messages.load(in: url)
            // Compared whole; reported by id, so that a failure stays readable.
            let (memoryAgrees, fileAgrees) = (fromMemory == expected, fromFile == expected)
            #expect(memoryAgrees, "round \(round): memory holds \(fromMemory.map(\.messageID)), expected \(expected.map(\.messageID))")
            #expect(fileAgrees, "round \(round): the file holds \(fromFile.map(\.messageID)), expected \(expected.map(\.messageID))")
            let file = try String(decoding: Data(contentsOf: GoldenTests.messageFile(in: folder.url)), as: UTF8.self)
            if file.split(separator: "\n").last.map({ $0.hasPrefix("*") || $0.hasPrefix("-") }) == true { appendedRounds += 1 }
        }
        // Most rounds appended their lines (the others compacted the file, or passed the limit).
        #expect(appendedRounds >= 20)
    }

    @Test func aChangeLogIntoAChannelTheWriteHadToReadLeavesItInMemory() async throws {
        // Given an encrypted channel on disk that this cache has not read (sealed lines cannot be
        // searched, so the write reads the file to append a change log)
        var configuration = Configuration()
        configuration.encryption = .aes256gcm(key: EncryptedGoldenTests.key)
        let writer = try Cache(directory: folder.url, configuration: configuration)
        try await writer.messages.replace(Fixtures.messages(3), in: url)
        try await writer.flush()
        let cache = try Cache(directory: folder.url, configuration: configuration)

        // When a change log edits message 2 and deletes message 3
        try await cache.messages.applyChangeLog(updated: [AppendedEditsTests.edited(2)], deletedMessageIDs: [3], in: url)
        try await cache.flush()

        // Then its lines are appended, and memory keeps what the write read with the change applied:
        // the next load reads no file
        // (An encrypted folder's file names are keyed: the one message file, found by listing.)
        let messages = folder.appending("messages")
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: messages.path).first { $0.hasSuffix(".lines") })
        let file = try String(decoding: Data(contentsOf: messages.appendingPathComponent(name)), as: UTF8.self)
        #expect(file.split(separator: "\n").count == 5)
        let hits = try await cache.statistics().memoryHits
        #expect(try await cache.messages.load(in: url) == [Fixtures.messages(1)[0], AppendedEditsTests.edited(2)])
        #expect(try await cache.statistics().memoryHits == hits + 1)
    }
}
