@testable import FlatCache
import Foundation
import Testing

/// The engine against a model: random saves, edits, change logs, replaces,
/// flushes, evictions and another instance's writes, and after every step
/// the loads equal what a plain model of the operations says. Exercises the
/// fast paths (appends in memory and on disk, the disk kept as a prefix of
/// the records in memory) next to every way they must give up.
@Suite struct EngineModelTests {
    let folder: TemporaryFolder
    let urls = ["model-a", "model-b"]

    init() throws {
        folder = try TemporaryFolder()
    }

    /// A channel as the model sees it: messages by id.
    typealias Channel = [Int64: ChatMessage]

    static func applying(_ messages: [ChatMessage], deleting deleted: Set<Int64> = [], to channel: Channel) -> Channel {
        var channel = channel
        for message in messages { channel[message.messageID] = message }
        for id in deleted { channel[id] = nil }
        return channel
    }

    /// What a load returns: the newest `limit`, in canonical order.
    static func loaded(_ channel: Channel, limit: Int) -> [ChatMessage] {
        let ordered = channel.values.sorted { ($0.createdAt, $0.messageID) < ($1.createdAt, $1.messageID) }
        return Array(ordered.suffix(limit))
    }

    @Test(arguments: [(limit: 10_000, memory: Configuration.defaultMemoryLimit, deletes: true),
                      (limit: 10_000, memory: 3_000, deletes: true),
                      (limit: 10_000, memory: 16_000, deletes: true),  // evicted channels keep summaries
                      (limit: 12, memory: Configuration.defaultMemoryLimit, deletes: false),
                      (limit: 12, memory: 3_000, deletes: false)])
    func loadsMatchTheModel(limit: Int, memory: Int, deletes: Bool) async throws {
        let seed = UInt64.random(in: 1...UInt64.max)
        var random = SeededGenerator(seed: seed)
        let configuration = Configuration(maxMessagesPerChannel: limit, memoryLimit: memory, writeDelay: .seconds(3_600))
        let cache = try ChatCache<ChatMessage, ChatChannel, ChatUser>(directory: folder.url, configuration: configuration)
        let other = try ChatCache<ChatMessage, ChatChannel, ChatUser>(
            directory: folder.url, configuration: Configuration(maxMessagesPerChannel: limit, memoryLimit: memory, writeDelay: .zero))
        var disk = [String: Channel]()  // what the files hold
        var waiting = [(url: String, replaces: Bool, update: (Channel) -> Channel)]()  // `cache`'s changes not yet flushed
        var nextID: Int64 = 1
        var clock: Int64 = 1_000

        func view(_ url: String) -> Channel {
            waiting.filter { $0.url == url }.reduce(disk[url] ?? [:]) { $1.update($0) }
        }
        func newMessage(_ url: String, at time: Int64) -> ChatMessage {
            defer { nextID += 1 }
            return ChatMessage(messageID: nextID, channelURL: url, createdAt: time, text: "m\(nextID)")
        }

        for step in 0..<400 {
            // Saves and memory hits return without suspending: let other tests' tasks run now and then.
            await Task.yield()
            let url = urls[random.next(below: urls.count)]
            let known = view(url)
            let roll = random.next(below: 100)
            switch roll {
            case 0..<40:  // new messages, newest: the append path
                clock += 1 + Int64(random.next(below: 3))
                let batch = (0..<1 + random.next(below: 3)).map { index in newMessage(url, at: clock + Int64(index)) }
                clock += 3
                try await cache.messages.save(batch)
                waiting.append((url, false, { Self.applying(batch, to: $0) }))
            case 40..<50:  // an older new message: inserted, not appended
                let message = newMessage(url, at: Int64(random.next(below: Int(clock))))
                try await cache.messages.save([message])
                waiting.append((url, false, { Self.applying([message], to: $0) }))
            case 50..<58:  // an edit of a cached message
                guard var edited = known.values.randomElement(using: &random) else { continue }
                edited.text = "edited at step \(step)"
                try await cache.messages.save([edited])
                waiting.append((url, false, { Self.applying([edited], to: $0) }))
            case 58..<64 where deletes:  // a change log
                let doomed = Set(known.keys.shuffled(using: &random).prefix(2))
                var edited = known.values.randomElement(using: &random).map { [$0] } ?? []
                for index in edited.indices { edited[index].text = "log at step \(step)" }
                let updated = edited
                try await cache.messages.applyChangeLog(updated: updated, deletedMessageIDs: doomed, in: url)
                waiting.append((url, false, { Self.applying(updated, deleting: doomed, to: $0) }))
            case 64..<66 where deletes:  // a replace
                clock += 10
                let fresh = (0..<random.next(below: 4)).map { index in newMessage(url, at: clock + Int64(index)) }
                clock += 5
                try await cache.messages.replace(fresh, in: url)
                waiting.append((url, true, { _ in Self.applying(fresh, to: [:]) }))
            case 66..<80:  // a flush
                try await cache.flush()
                for change in waiting { disk[change.url] = change.update(disk[change.url] ?? [:]) }
                waiting = []
            case 80..<88:  // another instance writes the file now
                clock += 1
                let message = newMessage(url, at: clock)
                _ = try other.messages.saveNow([message])
                disk[url] = Self.applying([message], to: disk[url] ?? [:])
                // A replace waiting for the flush keeps what another writer saved after it was made.
                if waiting.contains(where: { $0.url == url && $0.replaces }) {
                    waiting.append((url, false, { Self.applying([message], to: $0) }))
                }
            default:  // a page, which may read from disk without decoding all
                let expected = Self.loaded(known, limit: limit)
                let page = try await cache.messages.loadLatest(in: url, limit: 5)
                #expect(page == Array(expected.suffix(5)), "step \(step), seed \(seed)")
            }
            // Not after every step: a write must also meet a file another instance changed since this one looked.
            guard random.next(below: 3) == 0 else { continue }
            let loaded = try await cache.messages.load(in: url)
            #expect(loaded == Self.loaded(view(url), limit: limit), "step \(step), roll \(roll), seed \(seed)")
            if loaded != Self.loaded(view(url), limit: limit) { break }
        }
        try await cache.flush()
        for change in waiting { disk[change.url] = change.update(disk[change.url] ?? [:]) }
        // A fresh instance reads from the files what the model says they hold.
        let fresh = try ChatCache<ChatMessage, ChatChannel, ChatUser>(directory: folder.url, configuration: configuration)
        for url in urls {
            #expect(try fresh.messages.loadNow(in: url) == Self.loaded(disk[url] ?? [:], limit: limit), "seed \(seed)")
        }
    }
}

extension EngineModelTests {
    @Test func anOlderMessageAfterAnAppendKeepsEveryMessage() async throws {
        // Given a channel in memory whose last flush appended a message
        let url = urls[0]
        let cache = try ChatCache<ChatMessage, ChatChannel, ChatUser>(
            directory: folder.url, configuration: Configuration(writeDelay: .seconds(3_600)))
        let first = (1...3).map { ChatMessage(messageID: Int64($0), channelURL: url, createdAt: Int64($0) * 1_000, text: "m") }
        try await cache.messages.replace(first, in: url)
        try await cache.flush()
        _ = try await cache.messages.load(in: url)
        let newest = ChatMessage(messageID: 4, channelURL: url, createdAt: 4_000, text: "m")
        try await cache.messages.save([newest])
        try await cache.flush()

        // When an older message arrives (not an append) and is flushed
        let older = ChatMessage(messageID: 5, channelURL: url, createdAt: 500, text: "m")
        try await cache.messages.save([older])
        try await cache.flush()

        // Then memory and the file hold all five, in order
        let expected = [older] + first + [newest]
        #expect(try await cache.messages.load(in: url) == expected)
        let fresh = try ChatCache<ChatMessage, ChatChannel, ChatUser>(directory: folder.url)
        #expect(try fresh.messages.loadNow(in: url) == expected)
    }

    @Test func anEditAfterAppendsThenANewMessageLandsWhole() async throws {
        // Given appends flushed while the channel is in memory, then an edit waiting with a new message
        let url = urls[1]
        let cache = try ChatCache<ChatMessage, ChatChannel, ChatUser>(
            directory: folder.url, configuration: Configuration(writeDelay: .seconds(3_600)))
        var messages = (1...3).map { ChatMessage(messageID: Int64($0), channelURL: url, createdAt: Int64($0) * 1_000, text: "m") }
        try await cache.messages.replace(messages, in: url)
        _ = try await cache.messages.load(in: url)
        for id in 4...6 {
            let message = ChatMessage(messageID: Int64(id), channelURL: url, createdAt: Int64(id) * 1_000, text: "m")
            messages.append(message)
            try await cache.messages.save([message])
            try await cache.flush()
        }
        messages[1].text = "edited"
        try await cache.messages.save([messages[1]])
        let seventh = ChatMessage(messageID: 7, channelURL: url, createdAt: 7_000, text: "m")
        messages.append(seventh)
        try await cache.messages.save([seventh])

        // When it is flushed
        try await cache.flush()

        // Then memory and the file agree with what was saved
        #expect(try await cache.messages.load(in: url) == messages)
        let fresh = try ChatCache<ChatMessage, ChatChannel, ChatUser>(directory: folder.url)
        #expect(try fresh.messages.loadNow(in: url) == messages)
    }
}

extension EngineModelTests {
    @Test func appendsToAChannelMemoryLetGoKeepTheOrder() async throws {
        // Given a channel evicted from a small memory tier (its summary kept), then two newer messages appended
        let url = urls[0]
        let cache = try ChatCache<ChatMessage, ChatChannel, ChatUser>(
            directory: folder.url, configuration: Configuration(memoryLimit: 4_000, writeDelay: .seconds(3_600)))
        let first = (1...3).map { ChatMessage(messageID: Int64($0), channelURL: url, createdAt: Int64($0) * 1_000, text: "m") }
        try await cache.messages.replace(first, in: url)
        try await cache.flush()
        for other in 0..<10 {
            try await cache.messages.replace([ChatMessage(messageID: 100 + Int64(other), channelURL: "filler-\(other)",
                createdAt: 1, text: String(repeating: "x", count: 300))], in: "filler-\(other)")
            try await cache.flush()
        }
        var expected = first
        for id in 4...5 {
            let message = ChatMessage(messageID: Int64(id), channelURL: url, createdAt: Int64(id) * 1_000, text: "m")
            expected.append(message)
            try await cache.messages.save([message])
            try await cache.flush()
        }

        // When a message between the last two arrives
        let between = ChatMessage(messageID: 6, channelURL: url, createdAt: 4_500, text: "m")
        try await cache.messages.save([between])
        try await cache.flush()

        // Then it is placed between them, not appended after the last
        expected.insert(between, at: 4)
        let fresh = try ChatCache<ChatMessage, ChatChannel, ChatUser>(directory: folder.url)
        #expect(try fresh.messages.loadNow(in: url) == expected)
        #expect(try await cache.messages.load(in: url) == expected)
    }
}

extension EngineModelTests {
    @Test(.timeLimit(.minutes(1)))
    func loadsDuringFlushesNeverSeeAMessageTwice() async throws {
        // Given a channel in memory, new messages flushed one by one, and loads of it all the while
        // (a load that misses memory between a write's commit and memory learning of it once made
        // the records in memory hold the new message twice, and a later rewrite put that on disk)
        let url = urls[0]
        let cache = try ChatCache<ChatMessage, ChatChannel, ChatUser>(
            directory: folder.url, configuration: Configuration(maxMessagesPerChannel: 1_000, writeDelay: .seconds(3_600)))
        try await cache.messages.replace([ChatMessage(messageID: 1, channelURL: url, createdAt: 1_000, text: "m")], in: url)
        try await cache.flush()
        let writes = Task {
            for id in Int64(2)...300 {
                try await cache.messages.save([ChatMessage(messageID: id, channelURL: url, createdAt: id * 1_000, text: "m")])
                try await cache.flush()
            }
        }
        var duplicates = 0
        var loads = 0
        while loads < 100_000 {
            let loaded = try await cache.messages.load(in: url)
            loads += 1
            if Set(loaded.map(\.messageID)).count != loaded.count { duplicates += 1 }
            if loaded.last?.messageID == 300 { break }
            await Task.yield()
        }
        try await writes.value

        // Then no load saw a message twice, and an edit (a rewrite) keeps each message once
        #expect(duplicates == 0)
        var edited = ChatMessage(messageID: 2, channelURL: url, createdAt: 2_000, text: "edited")
        edited.updatedAt = 1
        try await cache.messages.applyChangeLog(updated: [edited], deletedMessageIDs: [], in: url)
        try await cache.flush()
        let fresh = try ChatCache<ChatMessage, ChatChannel, ChatUser>(
            directory: folder.url, configuration: Configuration(maxMessagesPerChannel: 1_000))
        let ids: [Int64] = try fresh.messages.loadNow(in: url).map(\.messageID)
        let expected: [Int64] = Array(1...300)
        #expect(ids == expected)
    }
}

extension SeededGenerator {
    /// A number in `0..<bound`.
    mutating func next(below bound: Int) -> Int { Int(next() % UInt64(bound)) }
}
