import Foundation
import Testing

@testable import FlatCache

/// The in-memory index against the reference: every query finds exactly the messages `SearchQuery.match(in:)` finds.
struct SearchIndexTests {
    typealias Index = SearchIndex<Int64>

    private static let vocabulary = [
        "hello", "trail", "tram", "Trailhead", "coffee", "café", "CAFE", "see", "you", "there", "tomorrow", "José", "jose",
        "Straße", "strasse", "Ødegaard", "привет", "Привет", "東京タワー", "東京", "京都", "明日", "ありがとう", "สวัสดีครับ",
        "ครับ", "👍", "👍🏽", "❤️", "don't", "example.com/trail", "12", "km", "12km", "naïve", "NAIVE",
        // The same words decomposed, half-width, or with marks still to come.
        "ｶﾞｽ", "ガス", "\u{1112}\u{1161}\u{11AB}\u{1100}\u{116E}\u{11A8}", "한국", "か\u{3099}き", "がき", "Jose\u{301}", "\u{301}",
    ]

    private static let queries = [
        "trail", "trail ", "tra", "tr", "t", "café ", "cafe", "CAFÉ", "jose ", "JOSÉ", "strasse ", "odegaard", "привет ",
        "東京", "京", "東京タワー", "タワー", "京都", "都", "ありがとう", "สวัสดี", "ครับ", "👍", "❤", "don ", "com trail",
        "\"see you there\"", "\"you see\"", "\"trail tram\"", "\"東京タワー hello\"", "hello \"see you\" tra", "12 km",
        "naive ", "nothingatall", "\"\"", "", "ガ", "ｶﾞ", "한", "한국", "\u{1112}\u{1161}", "が", "スワ", "สว", "\"see see\"",
        "\"東 hello\"", "\"hello 東\"", "jose\u{301}", "\u{301}", "ส", "\"東 京\"", "\"京 タ\"", "\"see you th", "\"東 東\"",
    ]

    /// A random message of 1–12 words of the vocabulary.
    private static func text(_ random: inout SeededGenerator) -> String {
        (0..<Int.random(in: 1...12, using: &random)).map { _ in vocabulary.randomElement(using: &random)! }
            .joined(separator: Bool.random(using: &random) ? ", " : " ")
    }

    @Test func everyQueryFindsWhatTheReferenceFinds() throws {
        var random = SeededGenerator(seed: 34)
        var index = Index()
        var texts = [String: [Int64: String]]()
        for channel in 0..<6 {
            let messages = (0..<40).map { key in Index.Message(key: Int64(key), sender: "u\(key % 3)", createdAt: Int64(key), text: Self.text(&random)) }
            index.replaceChannel("c\(channel)", with: messages)
            texts["c\(channel)"] = Dictionary(uniqueKeysWithValues: messages.map { ($0.key, $0.text) })
        }
        try check(&index, texts)
        // Edits and deletions: a channel read again whole, one emptied; then the dead dropped.
        let edited = (0..<30).map { key in Index.Message(key: Int64(key), sender: "u0", createdAt: Int64(100 + key), text: Self.text(&random)) }
        index.replaceChannel("c2", with: edited)
        texts["c2"] = Dictionary(uniqueKeysWithValues: edited.map { ($0.key, $0.text) })
        index.replaceChannel("c4", with: [])
        texts["c4"] = nil
        try check(&index, texts)
        #expect(index.deadCount == 80)
        // Message by message: edits and new messages, deletions (one of a key never there), a channel emptied.
        var upserts = [Index.Message]()
        for key in [0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 40, 41, 42, 43, 44] as [Int64] {
            upserts.append(Index.Message(key: key, sender: "u1", createdAt: 200 + key, text: Self.text(&random)))
        }
        index.upsert(upserts, in: "c1")
        for message in upserts { texts["c1"]![message.key] = message.text }
        index.remove([1, 2, 3, 999], from: "c3")
        for key in [1, 2, 3] as [Int64] { texts["c3"]![key] = nil }
        index.remove(Array(texts["c5"]!.keys), from: "c5")
        texts["c5"] = nil
        try check(&index, texts)
        #expect(index.deadCount == 80 + 10 + 3 + 40)
        index.compact()
        #expect(index.deadCount == 0)
        try check(&index, texts)
    }

    private func check(_ index: inout Index, _ texts: [String: [Int64: String]]) throws {
        var queriesWithHits = 0
        for query in Self.queries {
            let parsed = SearchQuery(query)
            let expected = Set(texts.flatMap { channel, messages in
                messages.filter { parsed.match(in: $0.value) != nil }.map { "\(channel)/\($0.key)" }
            })
            let found = try index.search(parsed).map { hit in
                let document = index.documents[Int(hit.document)]
                return "\(index.channels[Int(document.channel)])/\(document.key)"
            }
            #expect(found.count == Set(found).count, "\(query): a message found twice")
            #expect(Set(found) == expected, "\(query): found \(found.count), expected \(expected.count)")
            if !expected.isEmpty { queriesWithHits += 1 }
        }
        // The corpus is made so that most queries find something: a check of empty sets proves little.
        #expect(queriesWithHits >= Self.queries.count * 3 / 4)
    }

    @Test func filtersNarrowAndNewestFirstOrders() throws {
        var index = Index()
        index.replaceChannel("a", with: [
            .init(key: 1, sender: "ann", createdAt: 10, text: "coffee at nine"),
            .init(key: 2, sender: "bob", createdAt: 30, text: "coffee? coffee!"),
        ])
        index.replaceChannel("b", with: [.init(key: 3, sender: "ann", createdAt: 20, text: "more coffee")])
        func keys(_ filter: Index.Filter = .init(), _ order: Index.Order = .newestFirst, limit: Int = .max) throws -> [Int64] {
            try index.search(SearchQuery("coffee"), filter: filter, order: order, limit: limit).map { index.documents[Int($0.document)].key }
        }
        #expect(try keys() == [2, 3, 1])
        #expect(try keys(limit: 2) == [2, 3])
        #expect(try keys(.init(channels: ["a"])) == [2, 1])
        #expect(try keys(.init(senders: ["ann"])) == [3, 1])
        #expect(try keys(.init(from: 20)) == [2, 3])
        #expect(try keys(.init(until: 20)) == [1])
        #expect(try keys(.init(channels: ["nowhere"])) == [])
    }

    @Test func relevanceRanksMoreAndDenserMatchesFirst() throws {
        var index = Index()
        index.replaceChannel("a", with: [
            .init(key: 1, sender: "u", createdAt: 3, text: "trail notes and other things to bring along tomorrow"),
            .init(key: 2, sender: "u", createdAt: 1, text: "trail trail"),
            .init(key: 3, sender: "u", createdAt: 2, text: "the trail"),
            .init(key: 4, sender: "u", createdAt: 4, text: "nothing here"),
        ])
        let ranked = try index.search(SearchQuery("trail ")).map { index.documents[Int($0.document)].key }
        #expect(ranked == [2, 3, 1])
    }

    /// SQLite FTS5's `bm25()` (its own inverse document frequency, not Lucene's) ranks this corpus's
    /// second message first for "a b" (checked with Python's `sqlite3`, SQLite 3.40.1).
    @Test func relevanceIsFTS5s() throws {
        var index = Index()
        let texts = ["b a a a a", "a b x x"] + Array(repeating: "a x", count: 4) + Array(repeating: "c x", count: 4)
        index.replaceChannel("a", with: texts.enumerated().map { .init(key: Int64($0), sender: "u", createdAt: 0, text: $1) })
        let ranked = try index.search(SearchQuery("a b ")).map { index.documents[Int($0.document)].key }
        #expect(ranked == [1, 0])
    }

    /// Pages follow one another without a gap or a repeat, in either order, ties included.
    @Test(arguments: [Index.Order.relevance, .newestFirst])
    func pagesContinueWhereTheLastEnded(order: Index.Order) throws {
        var index = Index()
        // Many ties: the same text at the same millisecond, in three channels.
        let messages = (0..<25).map { Index.Message(key: Int64($0), sender: "u", createdAt: Int64($0 / 5), text: "trail \($0 % 2 == 0 ? "trail" : "")") }
        for channel in ["b", "a", "c"] { index.replaceChannel(channel, with: messages) }
        let all = try index.search(SearchQuery("trail"), order: order)
        #expect(all.count == 75)
        var paged = [Index.Hit]()
        var cursor: Index.PageCursor?
        while true {
            let page = try index.search(SearchQuery("trail"), order: order, limit: 7, after: cursor)
            guard let last = page.last else { break }
            paged += page
            let next: Index.PageCursor = try #require(index.cursor(after: last))
            cursor = next
        }
        #expect(paged == all)
        // A cursor names its hit by channel and key: a channel read again (its documents numbered
        // anew) and the dead compacted away keep the pages in step.
        func keys(_ hits: [Index.Hit]) -> [String] {
            hits.map { "\(index.channels[Int(index.documents[Int($0.document)].channel)])/\(index.documents[Int($0.document)].key)" }
        }
        let firstPage = try index.search(SearchQuery("trail"), order: order, limit: 10)
        let firstKeys = keys(firstPage)
        let next = try #require(index.cursor(after: firstPage.last!))
        index.replaceChannel("b", with: messages)
        index.compact()
        let rest = try index.search(SearchQuery("trail"), order: order, after: next)
        #expect(rest.count == 65)
        #expect(firstKeys + keys(rest) == keys(try index.search(SearchQuery("trail"), order: order)))
    }

    /// Messages added or removed between pages move every score: the next page weighs terms as
    /// the first did, so it neither skips nor repeats a hit.
    @Test func aPageAfterTheIndexChangedNeitherSkipsNorRepeats() throws {
        var index = Index()
        index.replaceChannel("a", with: [
            .init(key: 1, sender: "u", createdAt: 1, text: "apple apple"),
            .init(key: 2, sender: "u", createdAt: 1, text: "apple pie"),
            .init(key: 3, sender: "u", createdAt: 1, text: "apple pie and more words here"),
        ])
        index.replaceChannel("b", with: (0..<10).map { .init(key: Int64($0), sender: "u", createdAt: 0, text: "banana") })
        let first = try index.search(SearchQuery("apple "), limit: 1)
        #expect(first.map { index.documents[Int($0.document)].key } == [1])
        let cursor = try #require(index.cursor(after: first[0]))
        index.replaceChannel("b", with: (0..<20).map { .init(key: Int64($0), sender: "u", createdAt: 0, text: "banana") })
        #expect(try index.search(SearchQuery("apple "), after: cursor).map { index.documents[Int($0.document)].key } == [2, 3])
        index.remove(Array(0..<15), from: "b")
        #expect(try index.search(SearchQuery("apple "), after: cursor).map { index.documents[Int($0.document)].key } == [2, 3])
        // A hit whose message is gone gives no cursor.
        index.replaceChannel("a", with: [])
        #expect(index.cursor(after: first[0]) == nil)
    }

    /// A prefix finds words added after the terms were last sorted, and after many of them.
    @Test func aPrefixFindsNewWords() throws {
        var index = Index()
        index.replaceChannel("a", with: [.init(key: 0, sender: "u", createdAt: 0, text: "trail")])
        #expect(try index.search(SearchQuery("tra")).count == 1)
        index.upsert((1...5_000).map { .init(key: Int64($0), sender: "u", createdAt: Int64($0), text: "tram\($0)") }, in: "a")
        #expect(try index.search(SearchQuery("tram")).count == 5_000)
        index.upsert([.init(key: 9_999, sender: "u", createdAt: 9_999, text: "trampoline")], in: "a")
        #expect(try index.search(SearchQuery("tra")).count == 5_002)
        #expect(try index.search(SearchQuery("trampo")).count == 1)
    }

    @Test func aSearchCanBeCancelled() {
        var index = Index()
        index.replaceChannel("a", with: (0..<10_000).map { .init(key: Int64($0), sender: "u", createdAt: Int64($0), text: "trail") })
        var asked = 0
        #expect(throws: CancellationError.self) {
            try index.search(SearchQuery("trail"), isCancelled: {
                asked += 1
                return asked > 2
            })
        }
    }
}

/// The demo's messages (`Samples/Server/Data/messages.json`: ten languages, emoji, edits) and the
/// messages each query should find, written by hand, and what comes first by relevance.
struct SearchDemoCorpusTests {
    private struct DemoMessage: Decodable {
        var messageID: Int64
        var channelURL: String
        var createdAt: Int64
        var text: String
        var sender: Sender
        struct Sender: Decodable { var userID: String }
    }

    private static func demoIndex() throws -> (SearchIndex<Int64>, [String: [Int64: String]]) {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Samples/Server/Data/messages.json")
        let messages = try JSONDecoder().decode([DemoMessage].self, from: Data(contentsOf: file))
        var index = SearchIndex<Int64>()
        var texts = [String: [Int64: String]]()
        for (channel, inChannel) in Dictionary(grouping: messages, by: \.channelURL) {
            index.replaceChannel(channel, with: inChannel.map { .init(key: $0.messageID, sender: $0.sender.userID, createdAt: $0.createdAt, text: $0.text) })
            texts[channel] = Dictionary(uniqueKeysWithValues: inChannel.map { ($0.messageID, $0.text) })
        }
        return (index, texts)
    }

    /// A query, and the texts of the messages it finds (each text may stand in several channels).
    @Test(arguments: [
        ("alguien", ["¿Alguien tiene el enlace?", "¿Alguien tiene el enlace? (edited)"]),
        ("SMORREBROD ", ["Smørrebrød for lunch? 🥪"]),
        ("ca marche", ["Ça marche, à demain !", "Ça marche, à demain ! (edited)"]),
        ("всё ", ["Всё отлично, спасибо 😊"]),
        ("как дела", ["Привет! Как дела?", "Привет! Как дела? (edited)"]),
        ("مرحبا", ["مرحبا بالجميع"]),
        ("会議", ["明日の会議は10時からです。"]),
        ("设计", ["这个设计很好看！"]),
        ("下周", ["我们下周见。"]),
        ("お疲れ", ["お疲れさまです！"]),
        ("了解", ["了解しました 👍", "了解しました 👍 (edited)"]),
        ("🎉", ["Happy birthday!! 🎂🎉", "Happy birthday!! 🎂🎉 (edited)"]),
        ("👍", ["了解しました 👍", "了解しました 👍 (edited)"]),
        ("birth", ["Happy birthday!! 🎂🎉", "Happy birthday!! 🎂🎉 (edited)"]),
        ("18:40", ["Landing at 18:40 ✈️"]),
        ("\"the ending\"", ["I think the ending was rushed."]),
        ("\"ending the\"", []),
        ("trail 12 km", ["Here's the trail: 12 km, 600 m up ⛰️"]),
        ("edited review", ["Let's push the review to Thursday. (edited)"]),
        ("zebra", []),
    ])
    func eachQueryFindsTheMessagesItShould(query: String, expected: [String]) throws {
        var (index, texts) = try Self.demoIndex()
        let found = try index.search(SearchQuery(query)).map { hit in
            let document = index.documents[Int(hit.document)]
            return texts[index.channels[Int(document.channel)]]![document.key]!
        }
        #expect(Set(found) == Set(expected))
    }

    /// What comes first: more of the query's words, in a shorter message.
    @Test(arguments: [
        ("still saturday", "Are we still on for Saturday?"),
        // Every edited message has the word once: the shortest comes first. FTS5's unicode61 ranks
        // "了解しました 👍 (edited)" first: it reads 了解しました as one token and drops the emoji (2 tokens),
        // where this index reads six pairs and the emoji (8 tokens, against the Arabic's 3).
        ("edited ", "شكراً جزيلاً! (edited)"),
        ("push review thursday", "Let's push the review to Thursday."),
    ])
    func theBestHitComesFirst(query: String, best: String) throws {
        var (index, texts) = try Self.demoIndex()
        let top = try #require(try index.search(SearchQuery(query), limit: 1).first)
        let document = index.documents[Int(top.document)]
        #expect(texts[index.channels[Int(document.channel)]]![document.key]! == best)
    }
}
