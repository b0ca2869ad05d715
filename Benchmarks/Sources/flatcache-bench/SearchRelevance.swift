import BenchmarkKit
import FlatCache
import Foundation

/// Both systems' top hits for each query both rank, side by side: how many
/// of the first five agree, how close the scores of the messages both found
/// are, and for each message in one top five but not the other, why, when
/// the scores tell.
enum SearchRelevance {
    /// The top hits compared.
    static let top = 5

    struct Row {
        let query: SearchBenchQuery
        /// Messages in both top fives.
        let overlap: Int
        /// How many could agree: the shorter of the two top fives.
        let possible: Int
        /// Places in FlatCache's top five, and in FTS5's, of messages the other ranks level with its fifth:
        /// a tie that each orders its own way.
        var tiedMine = [Int]()
        var tiedTheirs = [Int]()
        /// The largest relative difference between the two scores of a message both found (first 20 hits).
        let scoreDifference: Double?
        /// One line per other message in one top five only, with why.
        var differences = [String]()

        /// The top fives agree but for the order of ties.
        var agreesUpToTies: Bool { differences.isEmpty }
    }

    static func compare(
        _ result: SearchResult, workload: Workload, systems: [SearchSystemKind: any SearchSystem]
    ) throws -> [Row] {
        guard let flatCache = systems[.flatCache], let fts5 = systems[.fts5] else { return [] }
        let messages = Dictionary(workload.messages.joined().map { ($0.messageID, $0) }, uniquingKeysWith: { $1 })
        var rows = [Row]()
        for (index, query) in result.queries.enumerated() where query.isCompared {
            let mine = Array((result.hits[.flatCache]?[index] ?? []).prefix(top))
            let theirs = Array((result.hits[.fts5]?[index] ?? []).prefix(top))
            let both = Set(mine.map(\.messageID)).intersection(theirs.map(\.messageID))
            var row = Row(
                query: query, overlap: both.count, possible: min(mine.count, theirs.count),
                scoreDifference: scoreDifference(result.hits[.flatCache]?[index] ?? [], result.hits[.fts5]?[index] ?? []))
            for (place, hit) in mine.enumerated() where !both.contains(hit.messageID) {
                guard let message = messages[hit.messageID] else { continue }
                let other = try fts5.score(of: message, for: query)
                if isTie(other, theirs) {
                    row.tiedMine.append(place + 1)
                } else {
                    row.differences.append("FlatCache's #\(place + 1) \(describe(message)): "
                        + reason(other, otherName: "FTS5", otherTop: theirs, score: hit.score, message: message, query: query))
                }
            }
            for (place, hit) in theirs.enumerated() where !both.contains(hit.messageID) {
                guard let message = messages[hit.messageID] else { continue }
                let other = try flatCache.score(of: message, for: query)
                if isTie(other, mine) {
                    row.tiedTheirs.append(place + 1)
                } else {
                    row.differences.append("FTS5's #\(place + 1) \(describe(message)): "
                        + reason(other, otherName: "FlatCache", otherTop: mine, score: hit.score, message: message, query: query))
                }
            }
            rows.append(row)
        }
        return rows
    }

    /// Whether `score` is the score of the last of a full `top`: the message could be there in another order of ties.
    private static func isTie(_ score: Double?, _ top: [SearchBenchHit]) -> Bool {
        guard let score, let last = top.last, top.count == Self.top else { return false }
        return abs(score - last.score) <= 1e-9 * max(1, abs(last.score))
    }

    /// Why a message one system ranks in its top five is not in the other's (not a tie).
    private static func reason(
        _ otherScore: Double?, otherName: String, otherTop: [SearchBenchHit], score: Double, message: ChatMessage,
        query: SearchBenchQuery
    ) -> String {
        let hint = lengthHint(message, query: query)
        guard let otherScore else { return "\(otherName) does not find it" + hint }
        guard let last = otherTop.last, otherTop.count == top else {
            return "\(otherName) scores it \(format(otherScore)) but returned fewer than \(top) hits" + hint
        }
        return "\(otherName) scores it \(format(otherScore)) (its #\(top): \(format(last.score))), here \(format(score))" + hint
    }

    /// What makes the two systems weigh this message differently, when its text shows it.
    private static func lengthHint(_ message: ChatMessage, query: SearchBenchQuery) -> String {
        if case .match(_, .trigram) = query.fts5 {
            return "; the trigram table weighs trigrams among the messages with CJK or Thai only, FlatCache pairs among all"
        }
        let scalars = message.text.unicodeScalars
        let emoji = scalars.contains { $0.value >= 0x1F000 || $0.properties.isEmojiPresentation }
        let unspaced = FTS5Schema.hasUnspacedScript(message.text)
        guard emoji || unspaced else { return "" }
        return "; its " + [emoji ? "emoji" : nil, unspaced ? "CJK or Thai" : nil].compactMap { $0 }.joined(separator: " and ")
            + " count as tokens for FlatCache, not for unicode61 (another document length)"
    }

    /// The largest |a - b| / |b| between the two scores of a message found by both.
    private static func scoreDifference(_ mine: [SearchBenchHit], _ theirs: [SearchBenchHit]) -> Double? {
        let theirScores = Dictionary(theirs.map { ($0.messageID, $0.score) }, uniquingKeysWith: { first, _ in first })
        let differences = mine.compactMap { hit in
            theirScores[hit.messageID].map { abs(hit.score - $0) / max(abs($0), 1e-12) }
        }
        return differences.max()
    }

    private static func describe(_ message: ChatMessage) -> String {
        let text = message.text.count > 48 ? message.text.prefix(47) + "…" : message.text[...]
        return "(\(message.messageID), \"\(text)\")"
    }

    static func format(_ score: Double) -> String { String(format: "%.4f", score) }
}
