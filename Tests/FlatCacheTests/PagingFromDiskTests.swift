@testable import FlatCache
import Foundation
import Testing

/// A message that counts its decodes, per channel (tests run in parallel).
struct CountedMessage: MessageRecord, Equatable {
    var messageID: Int64
    var channelURL: String
    var createdAt: Int64
    /// Decoding this body fails: a record a buggy writer left.
    static let undecodable = "undecodable"
    var body = ""

    func serialize() throws -> Data {
        Self.serializations.add(channelURL)
        return Data("\(messageID)|\(createdAt)|\(channelURL)|\(body)".utf8)
    }

    init(_ id: Int64, in channelURL: String, body: String = "") {
        (messageID, self.channelURL, createdAt, self.body) = (id, channelURL, id * 1_000, body)
    }

    init(serializedData: Data) throws {
        let parts = String(decoding: serializedData, as: UTF8.self).split(separator: "|", maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 4, let id = Int64(parts[0]), let time = Int64(parts[1]), parts[3] != Self.undecodable[...] else {
            throw CocoaError(.coderReadCorrupt)
        }
        (messageID, channelURL, createdAt, body) = (id, String(parts[2]), time, String(parts[3]))
        Self.decodes.add(channelURL)
    }

    static let decodes = Tally()
    static let serializations = Tally()

    final class Tally: @unchecked Sendable {
        private let lock = NSLock()
        private var counts = [String: Int]()
        func add(_ key: String) { lock.withLock { counts[key, default: 0] += 1 } }
        func count(_ key: String) -> Int { lock.withLock { counts[key] ?? 0 } }
        func reset(_ key: String) { lock.withLock { counts[key] = 0 } }
    }
}

/// The first page of a channel nothing has loaded yet decodes only the
/// messages the search looks at; the file is still checked whole, and the
/// next call keeps the channel in memory.
@Suite struct PagingFromDiskTests {
    let folder: TemporaryFolder

    init() throws {
        folder = try TemporaryFolder()
    }

    func cache(memoryLimit: Int = Configuration.defaultMemoryLimit) throws -> ChatCache<CountedMessage, ChatChannel, ChatUser> {
        try ChatCache(directory: folder.url, configuration: Configuration(maxMessagesPerChannel: 1_000, memoryLimit: memoryLimit))
    }

    func messages(_ count: Int, in url: String) -> [CountedMessage] {
        (1...Int64(count)).map { CountedMessage($0, in: url) }
    }

    @Test func aFirstPageDecodesAFewMessagesNotTheChannel() async throws {
        // Given a channel of 1,000 messages saved by another instance
        let url = "paging-first-\(UUID())"
        try cache().messages.saveNow(messages(1_000, in: url))
        let fresh = try cache()
        CountedMessage.decodes.reset(url)

        // When the first page before a time, and the newest page, are loaded
        let page = try await fresh.messages.load(in: url, before: 500_000, limit: 30)
        let firstDecodes = CountedMessage.decodes.count(url)

        // Then they are right, and only the binary search's probes (about
        // log2(1,000) = 10) and the page were decoded
        #expect(page == Array(messages(1_000, in: url)[469..<499]))
        #expect(firstDecodes <= 30 + 11)

        // And the next call reads the whole channel once and keeps it: later pages decode nothing
        let latest = try await fresh.messages.loadLatest(in: url, limit: 30)
        #expect(latest == Array(messages(1_000, in: url).suffix(30)))
        #expect(CountedMessage.decodes.count(url) == firstDecodes + 1_000)
        let older = try await fresh.messages.load(in: url, before: latest[0], limit: 30)
        #expect(older == Array(messages(1_000, in: url)[940..<970]))
        #expect(CountedMessage.decodes.count(url) == firstDecodes + 1_000)
    }

    @Test func everyPageKindFromDiskEqualsThePageFromMemory() async throws {
        // Given a channel with several messages per millisecond
        let url = "paging-kinds-\(UUID())"
        let all = (1...Int64(300)).map { id in
            var message = CountedMessage(id, in: url)
            message.createdAt = (id / 3) * 1_000
            return message
        }
        try cache().messages.saveNow(all)
        let inMemory = try cache()
        _ = try inMemory.messages.loadNow(in: url)

        // Then each kind of page, read first-touch from disk, equals the same page from memory
        for time in [Int64(-1), 0, 1_000, 49_000, 50_500, 100_000, 200_000] {
            for inclusive in [false, true] {
                let fromDisk = try await cache().messages.load(in: url, before: time, limit: 7, inclusive: inclusive)
                #expect(fromDisk == (try await inMemory.messages.load(in: url, before: time, limit: 7, inclusive: inclusive)))
                let after = try await cache().messages.load(in: url, after: time, limit: 7, inclusive: inclusive)
                #expect(after == (try await inMemory.messages.load(in: url, after: time, limit: 7, inclusive: inclusive)))
            }
        }
        for anchor in [all[0], all[149], all[299]] {
            #expect(try await cache().messages.load(in: url, before: anchor, limit: 5)
                == (try await inMemory.messages.load(in: url, before: anchor, limit: 5)))
            #expect(try await cache().messages.load(in: url, after: anchor, limit: 5)
                == (try await inMemory.messages.load(in: url, after: anchor, limit: 5)))
        }
        #expect(try await cache().messages.loadLatest(in: url, limit: 0) == [])
        #expect(try await cache().messages.loadLatest(in: url, limit: 1_000) == all)
    }

    @Test func aFirstPageSeesOnlyTheNewestMaxMessages() async throws {
        // Given a file holding more lines than a cache opened with a lower limit keeps
        let url = "paging-limit-\(UUID())"
        try cache().messages.saveNow(messages(100, in: url))
        let limited = try ChatCache<CountedMessage, ChatChannel, ChatUser>(
            directory: folder.url, configuration: Configuration(maxMessagesPerChannel: 40))

        // When it pages back from the start of time and asks for the oldest
        let oldest = try await limited.messages.load(in: url, after: 0, limit: 10)

        // Then it sees only the newest 40, as a load does
        #expect(oldest == Array(messages(100, in: url)[60..<70]))
    }

    @Test func aRecordThatDoesNotDecodeMakesTheFileAMissAsALoadDoes() async throws {
        // Given a channel whose 10th record cannot be decoded
        let url = "paging-damaged-\(UUID())"
        var all = messages(100, in: url)
        all[9].body = CountedMessage.undecodable
        try cache().messages.saveNow(all)
        let damaged = Reports()
        let fresh = try ChatCache<CountedMessage, ChatChannel, ChatUser>(
            directory: folder.url, configuration: Configuration(onDamagedFile: { damaged.add($0) }))

        // When a first page that would not look at that record is loaded
        let page = try await fresh.messages.load(in: url, after: 9_000, limit: 5)

        // Then the whole file is read as a load reads it: damaged, reported, a miss
        #expect(page == [])
        #expect(damaged.count == 1)
    }

    @Test func aFirstPageIncludesChangesNotYetWritten() async throws {
        // Given a channel on disk and a newer message saved but not yet written (write-behind)
        let url = "paging-pending-\(UUID())"
        try cache().messages.saveNow(messages(50, in: url))
        let slow = try ChatCache<CountedMessage, ChatChannel, ChatUser>(
            directory: folder.url, configuration: Configuration(writeDelay: .seconds(60)))
        try await slow.messages.save([CountedMessage(51, in: url)])

        // When the first page of that channel is loaded in this instance
        let latest = try await slow.messages.loadLatest(in: url, limit: 2)

        // Then the waiting message is in it
        #expect(latest.map(\.messageID) == [50, 51])
        try await slow.flush()
    }

    @Test func aPageOfAChannelMemoryLetGoDecodesOnlyWhatItNeeds() async throws {
        // Given a channel loaded whole, then pushed out of a small memory tier by others
        let url = "paging-evicted-\(UUID())"
        // (its summary stays: 1,000 ids are well within the quarter of the budget summaries may take)
        let cache = try cache(memoryLimit: 150_000)
        try cache.messages.saveNow(messages(1_000, in: url))
        _ = try await cache.messages.load(in: url)
        for other in 0..<3 {
            let filler = "paging-filler-\(other)-\(UUID())"
            try cache.messages.saveNow(messages(200, in: filler))
            _ = try await cache.messages.load(in: filler)
        }
        CountedMessage.decodes.reset(url)

        // When a page of it is loaded
        let page = try await cache.messages.loadLatest(in: url, limit: 30)

        // Then it decoded the page and the search's probes, not the channel
        #expect(page == Array(messages(1_000, in: url).suffix(30)))
        #expect(CountedMessage.decodes.count(url) <= 30 + 11)
    }

    @Test func withTheMemoryTierOffEveryPageDecodesOnlyWhatItNeeds() async throws {
        // Given a cache that keeps nothing in memory
        let url = "paging-off-\(UUID())"
        let cache = try cache(memoryLimit: 0)
        try cache.messages.saveNow(messages(1_000, in: url))
        CountedMessage.decodes.reset(url)

        // When it loads three pages
        for _ in 0..<3 { _ = try await cache.messages.loadLatest(in: url, limit: 30) }

        // Then at most one of them decoded the whole channel
        #expect(CountedMessage.decodes.count(url) <= 1_000 + 2 * 30)
    }
}

/// Damage reports, from any thread.
final class Reports: @unchecked Sendable {
    private let lock = NSLock()
    private var reports = [DamagedFile]()
    func add(_ report: DamagedFile) { lock.withLock { reports.append(report) } }
    var count: Int { lock.withLock { reports.count } }
}
