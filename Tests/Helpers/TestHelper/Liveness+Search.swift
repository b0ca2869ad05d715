import FlatCache
import FlatCacheTesting
import Foundation

/// `liveness <folder> search ...`: search. Each round cancels, at random
/// moments, searches (first pages and next pages), `prepare()` and
/// `progress()`, and a `SearchModel` typing a letter at a time, while the
/// world's writers keep saving into the cache; then every call must still
/// answer, and a search must find a message saved just before it. A new
/// cache instance (whose index builds again) every 10 rounds.
actor LivenessSearch: LivenessFamily {
    private let world: LivenessWorld
    private let folder: URL
    private let stopwatch: LivenessStopwatch
    /// The instance searched, and saved into after each storm (another instance's changes
    /// reach it once written, as they reach its loads).
    private var cache: LivenessCache
    private var search: MessageSearch<ChatMessage> { cache.search }
    private var saved: Int64 = 0

    init(folder: URL, seed: UInt64, stopwatch: LivenessStopwatch) async throws {
        world = try await LivenessWorld(folder: folder, seed: seed, writers: [.saves, .live], delivering: false)
        self.folder = folder
        self.stopwatch = stopwatch
        cache = world.cache
    }

    /// A query the writers' texts ("w<id>") and this family's own meet: a prefix, a word, two words.
    private static func someQuery(_ random: inout XorShift) -> String {
        switch random.next(4) {
        case 0: "w\(1 + random.next(9))"
        case 1: "w"
        case 2: "needle \(random.next(50))"
        default: "\"needle haystack\""
        }
    }

    func round(_ number: Int, random: inout XorShift) async throws {
        await world.setLatency(&random)
        if number > 0, number % 10 == 0 {
            // Another instance on the folder: its index builds from scratch while calls are cancelled.
            cache = try LivenessCache(directory: folder, configuration: Configuration(maxMessagesPerChannel: 200))
        }
        let search = search
        let queries = (0..<4).map { _ in Self.someQuery(&random) }

        var storm = LivenessStorm()
        for query in queries {
            storm.add("MessageSearch.messages(matching:)", &random) {
                let page = try await search.messages(matching: query, limit: 5)
                if let next = page.next { _ = try await search.messages(after: next) }
            }
        }
        storm.add("MessageSearch.prepare", &random) { try await search.prepare() }
        storm.add("MessageSearch.progress", &random) { _ = try await search.progress() }
        let counter = Counter()
        storm.again("MessageSearch.messages(matching:) (again)", times: 10, &random) {
            _ = try await search.messages(matching: queries[counter.next() % queries.count], order: .newestFirst)
        }
        if #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) {
            storm.add("SearchModel typing", &random) { @MainActor in
                let model = SearchModel(search, pageSize: 5)
                for prefix in ["n", "ne", "nee", "needle", "needle h"] {
                    model.text = prefix
                    try await Task.sleep(for: .microseconds(300))
                }
                await model.settle()
            }
        }
        await storm.run(stopwatch)

        // Everything still answers, and a message saved now is found by the next search.
        saved += 1
        let id = 900_000_000 + saved
        let word = "fresh\(saved)"
        try await cache.messages.save([
            ChatMessage(messageID: id, channelURL: "search-\(saved % 3)", createdAt: id, text: "needle haystack \(word)")
        ])
        let found = try await stopwatch.answer("MessageSearch.messages(matching:) (after the storm)") {
            try await search.messages(matching: word)
        }
        if found.hits.map(\.message.messageID) != [id] {
            let loaded = try await cache.messages.load(in: "search-\(saved % 3)").map(\.messageID)
            Liveness.violation(
                "a search after the storm found \(found.hits.map(\.message.messageID)), not the message \(id) saved before it "
                    + "(a load finds \(loaded.suffix(3)); \(found.progress))")
        }
        _ = try await stopwatch.answer("MessageSearch.progress (after the storm)") { try await search.progress() }
    }

    func finish() async throws {
        let search = search
        _ = try await stopwatch.answer("MessageSearch.prepare") { try await search.prepare() }
        try await cache.close()
        await world.stop(stopwatch)
    }
}
