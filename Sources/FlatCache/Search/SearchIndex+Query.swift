import Foundation

extension SearchIndex {
    /// Which documents a search may return.
    struct Filter: Sendable {
        /// Only these channels; `nil` for all.
        var channels: Set<String>?
        /// Only messages from these senders; `nil` for all.
        var senders: Set<String>?
        /// Only messages created at or after this time (milliseconds since 1970).
        var from: Int64?
        /// Only messages created before this time (milliseconds since 1970).
        var until: Int64?
    }

    /// How hits are ordered. Ties go newest first, then by channel id (ascending), then by key
    /// (descending), so that an order never depends on when documents were added.
    enum Order: Sendable {
        /// Best first, by BM25 (k1 = 1.2, b = 0.75, as SQLite FTS5's `bm25()`).
        case relevance
        /// Newest first, by creation time.
        case newestFirst
    }

    /// What BM25 weighed a search's terms against: the index's size when the first page was read.
    struct Statistics: Hashable, Sendable {
        /// How many documents were live.
        var documentCount: Int
        /// Their average length in tokens.
        var averageLength: Double
        /// How many live documents met each clause of the query.
        var clauseCounts: [Int]
    }

    /// A document that meets the query, and its BM25 score (higher is better).
    struct Hit: Equatable, Sendable {
        /// The document's number in ``SearchIndex/documents``: valid until the index changes.
        var document: Int32
        /// Its BM25 score for the query.
        var score: Double
        /// What the score was weighed against (the same for every hit of a search).
        var statistics: Statistics
    }

    /// Where a page of hits ended: the next page starts after it. It names the last hit by what
    /// stays when the index changes (its channel and key), not by its document's number, and it
    /// keeps what the scores were weighed against: messages added or removed between pages move
    /// every score, and the next page scores with the first page's weights, so that it neither
    /// skips nor repeats a hit.
    struct PageCursor: Hashable, Sendable {
        /// The last hit's score.
        var score: Double
        /// Its creation time.
        var createdAt: Int64
        /// Its channel.
        var channel: String
        /// Its key.
        var key: Key
        /// What the first page's scores were weighed against.
        var statistics: Statistics
    }

    /// The cursor that continues after `hit`; `nil` when the hit's document is no longer in the
    /// index (take the cursor before the index changes).
    func cursor(after hit: Hit) -> PageCursor? {
        guard hit.document >= 0, Int(hit.document) < documents.count, isLive[Int(hit.document)] else { return nil }
        let document = documents[Int(hit.document)]
        return PageCursor(
            score: hit.score, createdAt: createdAt[Int(hit.document)], channel: channels[Int(document.channel)], key: document.key,
            statistics: hit.statistics)
    }

    /// The documents that meet every clause of `query` and `filter`, in `order`, at most `limit`,
    /// after `cursor` when one is given.
    ///
    /// - Throws: `CancellationError` when `isCancelled` says so; it is asked every few thousand candidates.
    mutating func search(
        _ query: SearchQuery, filter: Filter = Filter(), order: Order = .relevance, limit: Int = .max,
        after cursor: PageCursor? = nil, isCancelled: () -> Bool = { false }
    ) throws(CancellationError) -> [Hit] {
        guard !query.isEmpty, liveCount > 0, limit > 0 else { return [] }
        var clauses = [ClauseMatches]()
        for clause in query.clauses {
            if isCancelled() { throw CancellationError() }
            clauses.append(matches(of: clause))
        }
        // The documents of the clause with fewest, looked up in each other clause (all ascending).
        let smallest = clauses.indices.min { clauses[$0].documents.count < clauses[$1].documents.count }!
        var cursors = [Int](repeating: 0, count: clauses.count)
        let channelNumbers = filter.channels.map { Set($0.compactMap { channels.firstIndex(of: $0).map(Int32.init) }) }
        let senderNumbers = filter.senders.map(senderNumbers)
        // A later page weighs terms as its first page did (see `PageCursor`).
        let statistics =
            cursor.map(\.statistics).flatMap { $0.clauseCounts.count == clauses.count ? $0 : nil }
            ?? Statistics(
                documentCount: liveCount, averageLength: Double(liveLength) / Double(liveCount),
                clauseCounts: clauses.map(\.documents.count))
        var hits = [Hit]()
        candidates: for (count, document) in clauses[smallest].documents.enumerated() {
            if count & 0xFFF == 0xFFF, isCancelled() { throw CancellationError() }
            var score = 0.0
            for (number, clause) in clauses.enumerated() {
                guard let frequency = clause.frequency(of: document, from: &cursors[number]) else { continue candidates }
                score += Self.bm25(
                    frequency: Double(frequency), length: Double(lengths[Int(document)]), averageLength: statistics.averageLength,
                    documentCount: Double(statistics.documentCount), withTerm: Double(statistics.clauseCounts[number]))
            }
            if let channelNumbers, !channelNumbers.contains(documents[Int(document)].channel) { continue }
            if let senderNumbers, !senderNumbers.contains(documents[Int(document)].sender) { continue }
            if let from = filter.from, createdAt[Int(document)] < from { continue }
            if let until = filter.until, createdAt[Int(document)] >= until { continue }
            let hit = Hit(document: document, score: score, statistics: statistics)
            if let cursor, !precedes(cursor, hit, order) { continue }
            hits.append(hit)
        }
        if isCancelled() { throw CancellationError() }
        return top(hits, limit, order)
    }

    /// Whether the hit at `cursor` comes before `hit` in `order`.
    private func precedes(_ cursor: PageCursor, _ hit: Hit, _ order: Order) -> Bool {
        let document = documents[Int(hit.document)]
        if order == .relevance, cursor.score != hit.score { return cursor.score > hit.score }
        let created = createdAt[Int(hit.document)]
        if cursor.createdAt != created { return cursor.createdAt > created }
        let channel = channels[Int(document.channel)]
        if cursor.channel != channel { return cursor.channel < channel }
        return cursor.key > document.key
    }

    /// Whether hit `a` comes before hit `b` in `order`.
    private func precedes(_ a: Hit, _ b: Hit, _ order: Order) -> Bool {
        if order == .relevance, a.score != b.score { return a.score > b.score }
        let (first, second) = (createdAt[Int(a.document)], createdAt[Int(b.document)])
        if first != second { return first > second }
        let (one, other) = (documents[Int(a.document)], documents[Int(b.document)])
        if one.channel != other.channel { return channels[Int(one.channel)] < channels[Int(other.channel)] }
        return one.key > other.key
    }

    /// BM25's weight of one term in one document, as SQLite FTS5's `bm25()` computes it
    /// (`fts5_aux.c`: an inverse document frequency of at most 0 counts as 1e-6), with the
    /// sign turned so that higher is better.
    private static func bm25(frequency: Double, length: Double, averageLength: Double, documentCount: Double, withTerm: Double) -> Double {
        let (k1, b) = (1.2, 0.75)
        let idf = max(log((documentCount - withTerm + 0.5) / (withTerm + 0.5)), 1e-6)
        return idf * frequency * (k1 + 1) / (frequency + k1 * (1 - b + b * length / averageLength))
    }

    /// The first `limit` of `hits` in `order`.
    private func top(_ hits: [Hit], _ limit: Int, _ order: Order) -> [Hit] {
        guard hits.count > limit else { return hits.sorted { precedes($0, $1, order) } }
        // The best `limit`, kept sorted: most hits are worse than the last kept and cost one comparison.
        // Hits come in the order documents were added, oldest first, so they are taken from the end,
        // where the newest, and the best of ties, usually are.
        var best = [Hit]()
        best.reserveCapacity(limit + 1)
        for hit in hits.reversed() {
            if best.count == limit, !precedes(hit, best[limit - 1], order) { continue }
            var (low, high) = (0, best.count)
            while low < high {
                let middle = (low + high) / 2
                if precedes(best[middle], hit, order) { low = middle + 1 } else { high = middle }
            }
            best.insert(hit, at: low)
            if best.count > limit { best.removeLast() }
        }
        return best
    }

    /// The live documents that meet `clause`, ascending, each with how often.
    private mutating func matches(of clause: SearchQuery.Clause) -> ClauseMatches {
        switch clause {
        case .term(let term, prefix: false):
            guard let list = postings(of: term) else { return ClauseMatches() }
            return live(list)
        case .term(let term, prefix: true):
            let expansions = terms(beginningWith: term)
            if expansions.count == 1 { return live(postings[Int(expansions.first!)]) }
            // A document with several of the expansions counts each of their places.
            var all = [(document: Int32, frequency: Int32)]()
            for expansion in expansions {
                let list = live(postings[Int(expansion)])
                all += zip(list.documents, list.frequencies).map { ($0, $1) }
            }
            all.sort { $0.document < $1.document }
            var merged = ClauseMatches()
            for (document, frequency) in all {
                if merged.documents.last == document {
                    merged.frequencies[merged.frequencies.count - 1] += frequency
                } else {
                    merged.documents.append(document)
                    merged.frequencies.append(frequency)
                }
            }
            return merged
        case .phrase(let placed):
            var lists = [SearchPostings]()
            for term in placed {
                guard let list = term.prefix ? postings(beginningWith: term.term) : postings(of: term.term) else { return ClauseMatches() }
                lists.append(list)
            }
            var found = ClauseMatches()
            var cursors = [SearchPostings.Cursor](repeating: SearchPostings.Cursor(), count: lists.count)
            var places = [[UInt32]](repeating: [], count: lists.count)
            documents: while lists[0].next(&cursors[0]) {
                let document = cursors[0].document
                guard isLive[Int(document)] else { continue }
                // Each later term's places in this document (the cursors only move forward).
                for number in 1..<lists.count {
                    guard lists[number].seek(&cursors[number], to: document) else { break documents }
                    guard cursors[number].document == document else { continue documents }
                }
                for number in lists.indices { lists[number].places(at: &cursors[number], into: &places[number]) }
                var count: Int32 = 0
                for start in places[0] {
                    let all = zip(placed.indices.dropFirst(), placed.dropFirst()).allSatisfy { number, term in
                        Self.contains(places[number][...], start + UInt32(term.offset))
                    }
                    if all { count += 1 }
                }
                if count > 0 {
                    found.documents.append(document)
                    found.frequencies.append(count)
                }
            }
            return found
        }
    }

    /// The postings of every term that begins with `prefix`, as one list; `nil` when no term does.
    private mutating func postings(beginningWith prefix: String) -> SearchPostings? {
        let expansions = terms(beginningWith: prefix)
        guard let first = expansions.first else { return nil }
        if expansions.count == 1 { return postings[Int(first)] }
        // Each place holds one term, so the expansions' places in a document never repeat.
        var byDocument = [Int32: [UInt32]]()
        var places = [UInt32]()
        for expansion in expansions {
            let list = postings[Int(expansion)]
            var cursor = SearchPostings.Cursor()
            while list.next(&cursor) {
                list.places(at: &cursor, into: &places)
                byDocument[cursor.document, default: []] += places
            }
        }
        var merged = SearchPostings()
        for document in byDocument.keys.sorted() { merged.append(document, byDocument[document]!.sorted()) }
        return merged
    }

    /// Whether the ascending `places` hold `place`.
    private static func contains(_ places: ArraySlice<UInt32>, _ place: UInt32) -> Bool {
        var low = places.startIndex
        var high = places.endIndex
        while low < high {
            let middle = (low + high) / 2
            if places[middle] < place { low = middle + 1 } else { high = middle }
        }
        return low < places.endIndex && places[low] == place
    }

    /// The live documents of `postings`, each with how many places it has there.
    private func live(_ postings: SearchPostings) -> ClauseMatches {
        var matches = ClauseMatches()
        matches.documents.reserveCapacity(postings.count)
        matches.frequencies.reserveCapacity(postings.count)
        var cursor = SearchPostings.Cursor()
        while postings.next(&cursor) {
            guard isLive[Int(cursor.document)] else { continue }
            matches.documents.append(cursor.document)
            matches.frequencies.append(Int32(cursor.placeCount))
        }
        return matches
    }
}

/// One clause's documents, ascending, and how often each meets it.
struct ClauseMatches {
    var documents: [Int32] = []
    var frequencies: [Int32] = []

    /// How often `document` meets the clause; `nil` when it does not. `cursor` is where the last
    /// lookup ended: documents are looked up in ascending order, so it only moves forward.
    func frequency(of document: Int32, from cursor: inout Int) -> Int32? {
        while cursor < documents.count, documents[cursor] < document { cursor += 1 }
        return cursor < documents.count && documents[cursor] == document ? frequencies[cursor] : nil
    }
}
