import Foundation
import Testing

@testable import FlatCache

/// The saved search index, `search.lines`: the next instance reads it instead
/// of every message file, and reads again only the files written since; a
/// damaged, foreign or old snapshot is passed over and the index built again;
/// it goes with `removeAll()` and a new key; encrypted, it holds no word.
@Suite(.timeLimit(.minutes(1))) struct SearchSnapshotTests {
    typealias Cache = ChatCache<ChatMessage, ChatChannel, ChatUser>

    let folder = try! TemporaryFolder()
    var searchFile: URL { folder.url.appendingPathComponent("search.lines") }

    static func messages(channels: Int, each: Int = 3) -> [ChatMessage] {
        (0..<channels).flatMap { channel in
            (1...each).map { index in
                MessageSearchTests.message(Int64(channel * 100 + index), in: "c\(channel)", "hello from \(channel) number \(index)")
            }
        }
    }

    /// Opens a cache, builds its index and waits until its snapshot is on disk.
    func builtCache(_ configuration: Configuration = Configuration()) async throws -> Cache {
        let cache = try Cache(directory: folder.url, configuration: configuration)
        try await cache.search.prepare()
        try await waitUntil("the snapshot is written") { FileManager.default.fileExists(atPath: searchFile.path) }
        return cache
    }

    @Test func theNextInstanceReadsTheSnapshotAndOnlyTheFilesWrittenSince() async throws {
        try Cache(directory: folder.url).messages.blocking.save(Self.messages(channels: 20))
        let first = try await builtCache()
        #expect(first.search.service.filesReadSoFar == 20)

        // Another instance writes one channel after the snapshot
        try Cache(directory: folder.url).messages.blocking.save([MessageSearchTests.message(5_000, in: "c7", "brand new words")])
        let second = try Cache(directory: folder.url)
        #expect(try await second.search.prepare().indexedMessages == 61)
        #expect(second.search.service.filesReadSoFar == 1)
        #expect(try await MessageSearchTests.ids(second, "brand") == [5_000])
        let some = try await MessageSearchTests.ids(second, "\"from 3 number 2\"")
        #expect(some == [302])
        let all = try await second.search.messages(matching: "hello", limit: 100)
        #expect(all.hits.count == 60, "\(all.hits.map(\.message.messageID).sorted())")
    }

    /// A word of letters only, different for each `number`.
    static func word(_ number: Int) -> String {
        var (number, word) = (number, "zed")
        repeat {
            word.append(Character(UnicodeScalar(UInt8(97 + number % 26))))
            number /= 26
        } while number > 0
        return word
    }

    @Test func theIndexIsSavedAgainAfterManyChannelsChangedNotAfterManyMessagesInOne() async throws {
        try Cache(directory: folder.url).messages.blocking.save(Self.messages(channels: 40))
        let cache = try await builtCache()
        let saved = try FileSystem.stamp(at: searchFile.path)
        // 40 messages in one channel, each found: one file changed, nothing to save yet
        for number in 0..<40 {
            try await cache.messages.save([MessageSearchTests.message(Int64(10_000 + number), in: "c0", Self.word(number))])
            #expect(try await MessageSearchTests.ids(cache, Self.word(number)) == [Int64(10_000 + number)])
        }
        cache.search.service.waitForSnapshotWrites()
        #expect(try FileSystem.stamp(at: searchFile.path) == saved, "saved again for changes to one channel")
        // One message in each of 31 more channels: 32 files changed, the index is saved
        for channel in 1..<32 {
            let id = Int64(20_000 + channel)
            try await cache.messages.save([MessageSearchTests.message(id, in: "c\(channel)", Self.word(100 + channel))])
            #expect(try await MessageSearchTests.ids(cache, Self.word(100 + channel)) == [id])
            if channel < 31 {
                cache.search.service.waitForSnapshotWrites()
                #expect(try FileSystem.stamp(at: searchFile.path) == saved, "saved after \(channel + 1) files changed")
            }
        }
        try await waitUntil("the index is saved again") { (try? FileSystem.stamp(at: searchFile.path)) != saved }
        // The next instance finds every message (the files written since are read again)
        try await cache.flush()
        let next = try Cache(directory: folder.url)
        #expect(try await next.search.prepare().indexedMessages == 120 + 40 + 31)
    }

    /// The snapshot in `search.lines` now, as `Int64` keys read it.
    func savedSnapshot() throws -> SearchSnapshot<Int64>? {
        let lines = try RecordLines.decode(try Data(contentsOf: searchFile))
        return SearchSnapshot<Int64>(records: lines.map { SearchSnapshotRecord(serializedData: $0) })
    }

    @Test func aRemovedChannelsSendersAndWordsLeaveTheSavedIndex() async throws {
        let cache = try Cache(directory: folder.url)
        try await cache.messages.save([MessageSearchTests.message(1, in: "a", "hello secret", from: "alice")])
        try await cache.messages.save([MessageSearchTests.message(2, in: "b", "hello", from: "bob")])
        #expect(try await MessageSearchTests.ids(cache, "hello").count == 2)
        try await cache.messages.removeAll(in: "a")
        #expect(try await MessageSearchTests.ids(cache, "hello") == [2])
        cache.search.service.waitForSnapshotWrites()
        let saved = try #require(try savedSnapshot())
        #expect(saved.index.senders == ["bob"] && saved.index.channels == ["b"] && saved.index.terms == ["hello"])
    }

    @Test func aSnapshotWithoutTheEntryOfAChannelItIndexesIsPassedOver() async throws {
        try Cache(directory: folder.url).messages.blocking.save(Self.messages(channels: 3))
        let first = try await builtCache()
        var saved = try #require(try savedSnapshot())
        #expect(saved.files.removeValue(forKey: first.layout.fileKey(forChannel: "c1") + ".lines") != nil)
        _ = try first.storage.replace(first.layout.searchFile, with: try #require(saved.records()))
        let second = try Cache(directory: folder.url)
        #expect(try await second.search.prepare().indexedMessages == 9)
        #expect(second.search.service.filesReadSoFar == 3)
    }

    @Test func aSaveWritesTheIndexAsItWasWhenAskedWhateverComesAfter() async throws {
        let cache = try Cache(directory: folder.url)
        try await cache.messages.save((1...50).map { MessageSearchTests.message(Int64($0), "hello \($0)") })
        #expect(try await MessageSearchTests.ids(cache, "hello").count == 50)
        let service = cache.search.service
        service.snapshotQueue.suspend()
        service.queue.sync { service.saveSnapshot() }
        // Changes while the save waits (too few to ask another): new channels, a message whose text is gone
        try await cache.messages.save((51...60).map { MessageSearchTests.message(Int64($0), in: "x\($0)", "hello \($0)") })
        try await cache.messages.save([MessageSearchTests.message(3, "")])
        #expect(try await MessageSearchTests.ids(cache, "hello").count == 59)
        service.snapshotQueue.resume()
        service.waitForSnapshotWrites()
        let saved = try #require(try savedSnapshot())
        #expect(saved.index.documents.map(\.key) == Array(1...50))
        #expect(SearchIndex<Int64>(stored: saved.index) != nil)
    }

    @Test func aChannelRemovedSinceTheSnapshotIsNotFound() async throws {
        try Cache(directory: folder.url).messages.blocking.save(Self.messages(channels: 4))
        _ = try await builtCache()
        try Cache(directory: folder.url).messages.blocking.removeAll(in: "c2")
        let second = try Cache(directory: folder.url)
        #expect(try await second.search.messages(matching: "hello", limit: 100).hits.count == 9)
        #expect(second.search.service.filesReadSoFar == 0)
    }

    @Test func aDamagedSnapshotIsReportedMovedAsideAndTheIndexBuiltAgain() async throws {
        try Cache(directory: folder.url).messages.blocking.save(Self.messages(channels: 5))
        _ = try await builtCache()
        var bytes = try Data(contentsOf: searchFile)
        bytes[bytes.count / 2] ^= 0x01
        try bytes.write(to: searchFile)

        let damaged = DamagedFileLog()
        var configuration = Configuration()
        configuration.onDamagedFile = { damaged.append($0.path) }
        let second = try Cache(directory: folder.url, configuration: configuration)
        #expect(try await second.search.messages(matching: "hello", limit: 100).hits.count == 15)
        #expect(second.search.service.filesReadSoFar == 5)
        #expect(damaged.paths.contains { $0.hasSuffix("search.lines") })
    }

    @Test func aSnapshotOfAnotherVersionIsPassedOver() async throws {
        try Cache(directory: folder.url).messages.blocking.save(Self.messages(channels: 3))
        let cache = try Cache(directory: folder.url)
        // A valid file whose header names version 99
        var header = SnapshotWriter()
        header.byte(0)
        for value: UInt64 in [99, 1, 1] { header.unsigned(value) }
        _ = try cache.storage.replace(cache.layout.searchFile, with: [SearchSnapshotRecord(header)])
        #expect(try await cache.search.messages(matching: "hello", limit: 100).hits.count == 9)
        #expect(cache.search.service.filesReadSoFar == 3)
    }

    @Test func removeAllAndANewKeyTakeTheSnapshotAway() async throws {
        let key = Data(repeating: 7, count: 32)
        try Cache(directory: folder.url, configuration: Configuration(encryption: .aes256gcm(key: key)))
            .messages.blocking.save(Self.messages(channels: 3))
        let cache = try await builtCache(Configuration(encryption: .aes256gcm(key: key)))
        let before = try Data(contentsOf: searchFile)

        let rotated = try await cache.rotateKey(to: Data(repeating: 9, count: 32))
        #expect(try await MessageSearchTests.ids(rotated, "hello 2 number 3") == [203])
        try await waitUntil("the new key's snapshot is written") {
            (try? Data(contentsOf: searchFile)).map { $0 != before } ?? false
        }
        #expect(rotated.search.service.filesReadSoFar == 3)

        try await rotated.removeAll()
        #expect(!FileManager.default.fileExists(atPath: searchFile.path))
        #expect(try await MessageSearchTests.ids(rotated, "hello").isEmpty)
    }

    @Test func aPlainCacheMigratedToEncryptionSearchesTheSameAndKeepsNoPlainIndex() async throws {
        try Cache(directory: folder.url).messages.blocking.save(Self.messages(channels: 3))
        let plain = try await builtCache()
        let encrypted = try await plain.migrate(encryption: .aes256gcm(key: Data(repeating: 3, count: 32)))
        #expect(try await MessageSearchTests.ids(encrypted, "\"from 1 number 2\"") == [102])
        try await encrypted.search.prepare()
        try await encrypted.close()
        if let bytes = FileManager.default.contents(atPath: searchFile.path) {
            #expect(bytes.range(of: Data("hello".utf8)) == nil)
        }
    }

    @Test func anEncryptedSnapshotHoldsNoWordAndNoLineAnotherCacheHas() async throws {
        let messages = Self.messages(channels: 6)
        var lines = [Set<Data>]()
        for (index, key) in [Data(repeating: 1, count: 32), Data(repeating: 1, count: 32), Data(repeating: 2, count: 32)].enumerated() {
            let folder = self.folder.url.appendingPathComponent("cache-\(index)")
            let cache = try Cache(directory: folder, configuration: Configuration(encryption: .aes256gcm(key: key)))
            try await cache.messages.save(messages)
            try await cache.search.prepare()
            let file = folder.appendingPathComponent("search.lines")
            try await waitUntil("the snapshot is written") { FileManager.default.fileExists(atPath: file.path) }
            try await cache.close()
            for path in try FileManager.default.subpathsOfDirectory(atPath: folder.path) {
                guard let bytes = FileManager.default.contents(atPath: folder.appendingPathComponent(path).path) else { continue }
                for word in ["hello", "from", "number"] { #expect(bytes.range(of: Data(word.utf8)) == nil, "\(path)") }
            }
            lines.append(Set(try Data(contentsOf: file).split(separator: UInt8(ascii: "\n")).map { Data($0) }))
        }
        // Sealed line by line with fresh nonces: not one line in common, even under the same key.
        #expect(lines[0].isDisjoint(with: lines[1]) && lines[0].isDisjoint(with: lines[2]))
    }

    @Test func aSnapshotTakenBeforeARemovalIsNotWrittenAfterIt() async throws {
        try Cache(directory: folder.url).messages.blocking.save(Self.messages(channels: 3))
        let cache = try await builtCache()
        try FileManager.default.removeItem(at: searchFile)
        // Another process empties the folder (`removeAll()`) after this one took its snapshot
        try FileManager.default.removeItem(at: folder.appending("messages"))
        let service = cache.search.service
        service.queue.sync { service.saveSnapshot() }
        service.snapshotQueue.sync {}
        #expect(!FileManager.default.fileExists(atPath: searchFile.path))
    }

    @Test func aSnapshotTakenBeforeThisProcesssRemoveAllIsNotWrittenAfterIt() async throws {
        let cache = try Cache(directory: folder.url, configuration: Configuration(writeDelay: .seconds(30)))
        try await cache.messages.save([MessageSearchTests.message(1, "secret password")])  // in memory: no stamp
        #expect(try await MessageSearchTests.ids(cache, "secret") == [1])
        let service = cache.search.service
        service.snapshotQueue.suspend()
        service.queue.sync { service.saveSnapshot() }
        try await cache.removeAll()
        service.snapshotQueue.resume()
        service.snapshotQueue.sync {}
        #expect(!FileManager.default.fileExists(atPath: searchFile.path))
    }

    @Test func removeAllLeavesNoChannelNameInTheNextSnapshot() async throws {
        let cache = try Cache(directory: folder.url)
        try await cache.messages.save([MessageSearchTests.message(1, in: "dm:alice-and-bob", "hello")])
        #expect(try await MessageSearchTests.ids(cache, "hello") == [1])
        try await cache.removeAll()
        try await cache.messages.save([MessageSearchTests.message(2, in: "c1", "hello again")])
        #expect(try await MessageSearchTests.ids(cache, "hello") == [2])
        try await cache.search.prepare()
        try await waitUntil("the snapshot is written") { FileManager.default.fileExists(atPath: searchFile.path) }
        let lines = try RecordLines.decode(try Data(contentsOf: searchFile))
        let snapshot = try #require(SearchSnapshot<Int64>(records: lines.map { SearchSnapshotRecord(serializedData: $0) }))
        #expect(snapshot.index.channels == ["c1"])
    }

    @Test func postingsWithAPlacePastTheirDocumentAreRefused() {
        var postings = SearchPostings()
        postings.append(0, [0, 4])
        #expect(SearchPostings(bytes: postings.bytes, lengths: [5]) != nil)
        #expect(SearchPostings(bytes: postings.bytes, lengths: [4]) == nil)
        #expect(SearchPostings(bytes: postings.bytes, lengths: []) == nil)
        #expect(SearchPostings(bytes: Array(postings.bytes.dropLast()), lengths: [5]) == nil)
    }

    @Test func postingsSayOnePlaceByTheirFlagAlone() {
        var postings = SearchPostings()
        postings.append(0, [3])
        postings.append(2, [0, 4])
        // Document 0: gap 1, one place (flag) at 3; document 2: gap 2, two places, at 0 and 4.
        #expect(postings.bytes == [0x03, 0x03, 0x04, 0x02, 0x00, 0x04])
        #expect(SearchPostings(bytes: postings.bytes, lengths: [5, 1, 5]) != nil)
        // One place said by a count instead of the flag, or none, is not canonical: refused.
        #expect(SearchPostings(bytes: [0x02, 0x01, 0x03], lengths: [5]) == nil)
        #expect(SearchPostings(bytes: [0x02, 0x00], lengths: [5]) == nil)
        // A gap of 0 (a document twice) is refused with either flag.
        #expect(SearchPostings(bytes: [0x03, 0x00, 0x01, 0x00], lengths: [5]) == nil)
        var cursor = SearchPostings.Cursor()
        var places = [UInt32]()
        #expect(postings.next(&cursor) && cursor.document == 0 && cursor.placeCount == 1)
        #expect(postings.next(&cursor) && cursor.document == 2)
        postings.places(at: &cursor, into: &places)
        #expect(places == [0, 4] && !postings.next(&cursor))
    }

    @Test func documentsAreWrittenAsStepsAndReadBackWhateverTheirKeysAndTimes() throws {
        var index = SearchIndex<Int64>()
        // Keys and times far apart (steps that wrap), senders repeated, channels interleaved.
        let messages: [(Int64, String, Int64, String)] = [
            (.max, "ode", .min, "one"), (.min, "ode", .max, "two"), (0, "", 0, "three"), (-7, "mina", -1, "four"),
        ]
        for (number, (key, sender, createdAt, text)) in messages.enumerated() {
            index.upsert([.init(key: key, sender: sender, createdAt: createdAt, text: text)], in: number % 2 == 0 ? "a" : "b")
        }
        let snapshot = SearchSnapshot<Int64>(
            files: ["a.lines": .init(channelURL: "a", stamp: nil), "b.lines": .init(channelURL: "b", stamp: nil)],
            index: index.stored())
        let records = try #require(snapshot.records())
        let read = try #require(SearchSnapshot<Int64>(records: records))
        #expect(read.index.senders == ["ode", "", "mina"])
        #expect(read.index.documents.map(\.key) == messages.map(\.0))
        #expect(read.index.createdAt == messages.map(\.2))
        #expect(read.index.documents.map { read.index.channels[Int($0.channel)] } == ["a", "b", "a", "b"])
        #expect(read.index.documents.map { read.index.senders[Int($0.sender)] } == messages.map(\.1))
        #expect(
            read.index.documents.map(\.fingerprint)
                == messages.map { SearchFingerprint.of(text: $0.3, sender: $0.1, createdAt: $0.2) })
    }

    @Test func verifyChecksTheSnapshot() async throws {
        try Cache(directory: folder.url).messages.blocking.save(Self.messages(channels: 2))
        let cache = try await builtCache()
        let verified = try cache.blocking.verify()
        let search = try #require(verified.first { $0.path == "search.lines" })
        #expect(search.problem == nil && search.records > 0)
        var bytes = try Data(contentsOf: searchFile)
        bytes[bytes.count - 3] ^= 0x01
        try bytes.write(to: searchFile)
        #expect(try cache.blocking.verify().first { $0.path == "search.lines" }?.problem != nil)
    }

    @Test func recordsOutOfPlaceOrTwiceAreRefused() throws {
        var index = SearchIndex<Int64>()
        index.upsert([.init(key: 1, sender: "s", createdAt: 1, text: "hi there")], in: "c")
        let records = try #require(SearchSnapshot<Int64>(files: ["x.lines": .init(channelURL: "c", stamp: nil)], index: index.stored()).records())
        #expect(SearchSnapshot<Int64>(records: records) != nil)
        // The header not first, the files or the documents twice
        #expect(SearchSnapshot<Int64>(records: [records[1], records[0]] + records[2...]) == nil)
        #expect(SearchSnapshot<Int64>(records: records + [records[1]]) == nil)
        #expect(SearchSnapshot<Int64>(records: records + [records[2]]) == nil)
        // A file named twice
        var files = SnapshotWriter()
        files.byte(1)
        files.count(2)
        for _ in 0..<2 {
            files.string("x.lines")
            files.string("")
            files.byte(0)
        }
        var twice = records
        twice[1] = SearchSnapshotRecord(files)
        #expect(SearchSnapshot<Int64>(records: twice) == nil)
        // A sender twice, or a document of a sender not listed
        var stored = index.stored()
        stored.senders = ["s", "s"]
        #expect(SearchIndex<Int64>(stored: stored) == nil)
        stored.senders = []
        #expect(SearchIndex<Int64>(stored: stored) == nil)
    }

    @Test func aSnapshotsRecordsReadBackAsTheIndexTheyCameFrom() throws {
        var index = SearchIndex<String>()
        index.upsert([.init(key: "$b", sender: "ode", createdAt: 2, text: "東京 trail café 👋🏽")], in: "!room:one")
        index.upsert([.init(key: "$a", sender: "", createdAt: -5, text: "see you at the trail head")], in: "!room:two")
        index.remove(["$missing"], from: "!room:two")
        let stamp = FileStamp(
            device: 1, inode: 2, size: 3, modified: .init(seconds: 4, nanoseconds: 5), changed: .init(seconds: -6, nanoseconds: 7))
        let snapshot = SearchSnapshot<String>(
            files: ["a.lines": .init(channelURL: "!room:one", stamp: stamp), "b.lines": .init(channelURL: nil, stamp: nil)],
            index: index.stored())
        let records = try #require(snapshot.records())
        let read = try #require(SearchSnapshot<String>(records: records))
        #expect(read.files["a.lines"]?.stamp == stamp && read.files["a.lines"]?.channelURL == "!room:one")
        #expect(read.index.documents.map(\.key) == ["$b", "$a"] && read.index.senders == ["ode", ""])
        #expect(read.index.documents[0].fingerprint == SearchFingerprint.of(text: "東京 trail café 👋🏽", sender: "ode", createdAt: 2))
        #expect(read.files["b.lines"]?.channelURL == nil && read.files["b.lines"]?.stamp == nil)
        var restored = try #require(SearchIndex<String>(stored: read.index))
        for query in ["trail", "tra", "東京", "\"trail head\"", "cafe", "👋"] {
            var original = index
            #expect(
                try restored.search(SearchQuery(query)).map(\.document) == (try original.search(SearchQuery(query)).map(\.document)),
                "\(query)")
        }
        // Another key type, or a record cut short, is no snapshot
        #expect(SearchSnapshot<Int64>(records: records) == nil)
        var cut = records
        cut[2] = SearchSnapshotRecord(Array(records[2].bytes.dropLast()))
        #expect(SearchSnapshot<String>(records: cut) == nil)
    }
}

/// Paths `onDamagedFile` reported, from any thread.
final class DamagedFileLog: @unchecked Sendable {
    private let lock = NSLock()
    private var reported = [String]()
    func append(_ path: String) { lock.withLock { reported.append(path) } }
    var paths: [String] { lock.withLock { reported } }
}

/// `search.lines` byte for byte: the worked example of docs/format.md ("The search index").
@Suite struct SearchSnapshotGoldenTests {
    static let fileName = String(repeating: "a", count: 64) + ".lines"

    static func snapshot() -> SearchSnapshot<Int64> {
        var index = SearchIndex<Int64>()
        index.upsert([.init(key: 1, sender: "mina", createdAt: 1_700_000_000_000, text: "Hi there, José")], in: "trip")
        let stamp = FileStamp(
            device: 2049, inode: 131, size: 120, modified: .init(seconds: 1_700_000_000, nanoseconds: 5),
            changed: .init(seconds: 1_700_000_000, nanoseconds: 5))
        return SearchSnapshot(files: [fileName: .init(channelURL: "trip", stamp: stamp)], index: index.stored())
    }

    @Test func aSnapshotsBytesArePinnedAndDocumented() throws {
        let folder = try TemporaryFolder()
        let records = try #require(Self.snapshot().records())
        let file = RecordFile(path: folder.appending("search").appendingPathComponent("search.lines").path)
        try FileManager.default.createDirectory(at: folder.appending("search"), withIntermediateDirectories: true)
        _ = try file.write(records.map(\.bytes), synchronized: false)
        try GoldenFolder.assertMatches(folder.appending("search"), golden: "search-index")

        // The golden reads back as the snapshot it came from
        let golden = try RecordLines.decode(try Data(contentsOf: GoldenFolder.url("search-index").appendingPathComponent("search.lines")))
        let read = try #require(SearchSnapshot<Int64>(records: golden.map { SearchSnapshotRecord(serializedData: $0) }))
        #expect(read.files[Self.fileName]?.channelURL == "trip" && read.index.terms == ["hi", "there", "jose"])

        // docs/format.md shows each line
        let document = try String(contentsOf: GoldenFolder.url("search-index").appendingPathComponent("../../../../docs/format.md").standardized, encoding: .utf8)
        for line in try String(contentsOf: GoldenFolder.url("search-index").appendingPathComponent("search.lines"), encoding: .utf8)
            .split(separator: "\n")
        {
            #expect(document.contains(line), "docs/format.md lacks the line \(line)")
        }
    }
}
