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

    /// How hits are ordered.
    enum Order: Sendable {
        /// Best first, by BM25 (k1 = 1.2, b = 0.75, as SQLite FTS5's `bm25()`); ties newest first.
        case relevance
        /// Newest first, by creation time.
        case newestFirst
    }

    /// A document that meets the query, and its BM25 score (higher is better).
    struct Hit: Equatable, Sendable {
        /// The document's number in ``SearchIndex/documents``.
        var document: Int32
        /// Its BM25 score for the query.
        var score: Double
    }

    /// The documents that meet every clause of `query` and `filter`, in `order`, at most `limit`.
    mutating func search(_ query: SearchQuery, filter: Filter = Filter(), order: Order = .relevance, limit: Int = .max) -> [Hit] {
        guard !query.isEmpty, liveCount > 0, limit > 0 else { return [] }
        let clauses = query.clauses.map { matches(of: $0) }
        // The documents of the clause with fewest, looked up in each other clause (all ascending).
        let smallest = clauses.indices.min { clauses[$0].documents.count < clauses[$1].documents.count }!
        var cursors = [Int](repeating: 0, count: clauses.count)
        let channelNumbers = filter.channels.map { Set($0.compactMap { channels.firstIndex(of: $0).map(Int32.init) }) }
        let averageLength = Double(liveLength) / Double(liveCount)
        var hits = [Hit]()
        candidates: for document in clauses[smallest].documents {
            var score = 0.0
            for (number, clause) in clauses.enumerated() {
                guard let frequency = clause.frequency(of: document, from: &cursors[number]) else { continue candidates }
                score += Self.bm25(
                    frequency: Double(frequency), length: Double(lengths[Int(document)]), averageLength: averageLength,
                    documentCount: Double(liveCount), withTerm: Double(clause.documents.count))
            }
            if let channelNumbers, !channelNumbers.contains(documents[Int(document)].channel) { continue }
            if let senders = filter.senders, !senders.contains(documents[Int(document)].sender) { continue }
            if let from = filter.from, createdAt[Int(document)] < from { continue }
            if let until = filter.until, createdAt[Int(document)] >= until { continue }
            hits.append(Hit(document: document, score: score))
        }
        return top(hits, limit, order)
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
        let precedes: (Hit, Hit) -> Bool
        switch order {
        case .relevance:
            precedes = { a, b in
                if a.score != b.score { return a.score > b.score }
                return newer(a.document, b.document)
            }
        case .newestFirst:
            precedes = { a, b in newer(a.document, b.document) }
        }
        guard hits.count > limit else { return hits.sorted(by: precedes) }
        // The best `limit`, kept sorted: most hits are worse than the last kept and cost one comparison.
        // Newest last: hits come in the order documents were added, oldest first, so they are taken
        // from the end, where the best usually are.
        var best = [Hit]()
        best.reserveCapacity(limit + 1)
        for hit in hits.reversed() {
            if best.count == limit, !precedes(hit, best[limit - 1]) { continue }
            var (low, high) = (0, best.count)
            while low < high {
                let middle = (low + high) / 2
                if precedes(best[middle], hit) { low = middle + 1 } else { high = middle }
            }
            best.insert(hit, at: low)
            if best.count > limit { best.removeLast() }
        }
        return best
    }

    /// Whether document `a` is newer than `b`: created later, or added later at the same millisecond.
    private func newer(_ a: Int32, _ b: Int32) -> Bool {
        let (first, second) = (createdAt[Int(a)], createdAt[Int(b)])
        return first != second ? first > second : a > b
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
