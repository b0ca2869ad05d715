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
        // Every clause, its documents intersected, smallest first.
        var candidates = clauses.min { $0.documents.count < $1.documents.count }!.documents
        for clause in clauses where !candidates.isEmpty {
            candidates = candidates.filter { clause.frequency(of: $0) != nil }
        }
        let channelNumbers = filter.channels.map { Set($0.compactMap { channels.firstIndex(of: $0).map(Int32.init) }) }
        let averageLength = Double(liveLength) / Double(liveCount)
        var hits = [Hit]()
        for document in candidates {
            let info = documents[Int(document)]
            if let channelNumbers, !channelNumbers.contains(info.channel) { continue }
            if let senders = filter.senders, !senders.contains(info.sender) { continue }
            if let from = filter.from, info.createdAt < from { continue }
            if let until = filter.until, info.createdAt >= until { continue }
            var score = 0.0
            for clause in clauses {
                score += Self.bm25(
                    frequency: Double(clause.frequency(of: document)!), length: Double(info.length), averageLength: averageLength,
                    documentCount: Double(liveCount), withTerm: Double(clause.documents.count))
            }
            hits.append(Hit(document: document, score: score))
        }
        return top(hits, limit, order)
    }

    /// BM25's weight of one term in one document.
    private static func bm25(frequency: Double, length: Double, averageLength: Double, documentCount: Double, withTerm: Double) -> Double {
        let (k1, b) = (1.2, 0.75)
        let idf = log((documentCount - withTerm + 0.5) / (withTerm + 0.5) + 1)
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
        var best = [Hit]()
        best.reserveCapacity(limit + 1)
        for hit in hits {
            if best.count == limit, !precedes(hit, best[limit - 1]) { continue }
            let slot = best.firstIndex { precedes(hit, $0) } ?? best.count
            best.insert(hit, at: slot)
            if best.count > limit { best.removeLast() }
        }
        return best
    }

    /// Whether document `a` is newer than `b`: created later, or added later at the same millisecond.
    private func newer(_ a: Int32, _ b: Int32) -> Bool {
        let (first, second) = (documents[Int(a)].createdAt, documents[Int(b)].createdAt)
        return first != second ? first > second : a > b
    }

    /// The live documents that meet `clause`, ascending, each with how often.
    private mutating func matches(of clause: SearchQuery.Clause) -> ClauseMatches {
        switch clause {
        case .term(let term, prefix: false):
            return ClauseMatches(postings[term].map { live($0) { _, places in places.count } } ?? [])
        case .term(let term, prefix: true):
            var all = [(Int32, Int)]()
            for expansion in terms(beginningWith: term) {
                all += live(postings[expansion]!) { _, places in places.count }
            }
            // A document with several of the expansions counts each of their places.
            all.sort { $0.0 < $1.0 }
            var merged = [(Int32, Int)]()
            for (document, frequency) in all {
                if let last = merged.last, last.0 == document {
                    merged[merged.count - 1].1 += frequency
                } else {
                    merged.append((document, frequency))
                }
            }
            return ClauseMatches(merged)
        case .phrase(let terms):
            let lists = terms.compactMap { postings[$0.term] }
            guard lists.count == terms.count else { return ClauseMatches([]) }
            // Each later term's places by document, for the documents of the first.
            let first = lists[0]
            var found = [(Int32, Int)]()
            let lookups = lists.dropFirst().map { list in Dictionary(uniqueKeysWithValues: list.documents.enumerated().map { ($1, $0) }) }
            for index in first.documents.indices where documents[Int(first.documents[index])].isLive {
                let document = first.documents[index]
                let others = zip(lists.dropFirst(), lookups).compactMap { list, lookup in lookup[document].map { list.places(at: $0) } }
                guard others.count == lists.count - 1 else { continue }
                let count = first.places(at: index).filter { start in
                    zip(terms.dropFirst(), others).allSatisfy { placed, places in
                        places.contains(UInt16(clamping: Int(start) + placed.offset))
                    }
                }.count
                if count > 0 { found.append((document, count)) }
            }
            return ClauseMatches(found)
        }
    }

    /// The live documents of `postings`, each with `frequency` of its places.
    private func live(_ postings: Postings, _ frequency: (Int32, ArraySlice<UInt16>) -> Int) -> [(Int32, Int)] {
        postings.documents.indices.compactMap { index in
            let document = postings.documents[index]
            return documents[Int(document)].isLive ? (document, frequency(document, postings.places(at: index))) : nil
        }
    }
}

/// One clause's documents, ascending, and how often each meets it.
struct ClauseMatches {
    let documents: [Int32]
    private let frequencies: [Int32: Int]

    init(_ matches: [(Int32, Int)]) {
        documents = matches.map(\.0)
        frequencies = Dictionary(uniqueKeysWithValues: matches)
    }

    /// How often `document` meets the clause; `nil` when it does not.
    func frequency(of document: Int32) -> Int? { frequencies[document] }
}
