import BenchmarkKit
import Foundation

extension SearchResult {
    /// The workload's section of `flatcache-bench search`'s report.
    var markdown: [String] {
        let name = workload.name
        var out = ["## Search, workload \(name): \(workload.messageCount.formatted()) messages in "
            + "\(workload.channels.count.formatted()) channels\n"]
        out.append(corpus + "\n")
        out.append("| row | FlatCache | SQLite FTS5 | FlatCache / FTS5 | target | |")
        out.append("|---|---|---|---|---|---|")
        for row in rows {
            let ratio = row.ratio.map { String(format: "%.2fx", $0) } ?? "–"
            let target = row.limit.map { "≤ \(String(format: "%.1f", $0))x" } ?? "–"
            let verdict = row.limit.flatMap { limit in row.ratio.map { $0 <= limit ? "met" : "MISSED" } } ?? ""
            out.append("| \(row.name) | \(row.flatCache) | \(row.fts5) | \(ratio) | \(target) | \(verdict) |")
        }
        out.append("")
        for kind in SearchSystemKind.allCases {
            guard let bytes = indexBytes[kind] else { continue }
            out.append("Index bytes, \(kind.rawValue): \(bytes.how).")
        }
        out.append("")
        out += queryTable + relevanceSection + writesTable + memoryTable
        return out
    }

    /// The text both stores hold.
    private var corpus: String {
        let texts = workload.messages.joined().map(\.text)
        let bytes = texts.reduce(0) { $0 + $1.utf8.count }
        let characters = texts.reduce(0) { $0 + $1.count }
        let unspaced = texts.filter(FTS5Schema.hasUnspacedScript).count
        let emoji = texts.filter { $0.unicodeScalars.contains { $0.value >= 0x1F000 || $0.properties.isEmojiPresentation } }.count
        func share(_ count: Int) -> String { String(format: "%.1f%%", 100 * Double(count) / Double(max(1, texts.count))) }
        return "Text from `SearchText` (seeded; Zipf-like words, accented words, Russian, Japanese, Chinese, Thai, emoji), "
            + "the same messages in both stores: \(Report.megabytes(bytes)) of text, "
            + String(format: "%.0f", Double(characters) / Double(max(1, texts.count))) + " characters a message; "
            + "\(share(unspaced)) with Chinese, Japanese or Thai (what FTS5's `trigram` table holds), \(share(emoji)) with emoji. "
            + "FlatCache: `cache.search` (blocking twins), durability off, writes until `flush()` returns. "
            + "SQLite FTS5 through GRDB: a message table with a `text` column, two external-content FTS5 tables over it "
            + "(`unicode61 remove_diacritics 2` for every message, `trigram` for those with CJK or Thai), kept by triggers, "
            + "WAL, `synchronous = OFF`, `bm25()`. Ratios are FlatCache's median (or percentile) over FTS5's in this run."
    }

    private var queryTable: [String] {
        var out = ["### \(workload.name): each query (medians of \(rounds) rounds, \(SearchRuns.limit) hits asked)\n"]
        out.append("| query | shape | FlatCache | SQLite FTS5 | FlatCache / FTS5 | FTS5 asked | hits (FlatCache / FTS5) | top-\(SearchRelevance.top) overlap | largest score difference |")
        out.append("|---|---|---|---|---|---|---|---|---|")
        let relevance = Dictionary(relevance.map { ($0.query, $0) }, uniquingKeysWith: { first, _ in first })
        for (index, query) in queries.enumerated() {
            guard let mine = queryTimes[.flatCache]?[index], let theirs = queryTimes[.fts5]?[index] else { continue }
            let asked: String
            switch query.fts5 {
            case .match(let match, let table): asked = "`\(table.rawValue) MATCH '\(match)'`"
            case .scan(let text): asked = "scan: `instr(text, '\(text)')`, newest first"
            }
            let found = "\(hits[.flatCache]?[index].count ?? 0) / \(hits[.fts5]?[index].count ?? 0)"
            let row = relevance[query]
            let overlap = row.map { "\($0.overlap) of \($0.possible)" } ?? "not ranked by FTS5"
            let difference = row?.scoreDifference.map { String(format: "%.1e", $0) } ?? "–"
            out.append("| \(query.label)\(query.isCompared ? "" : " *") | \(query.kind.rawValue) | \(mine.summary) | "
                + "\(theirs.summary) | \(String(format: "%.2fx", mine.median / theirs.median)) | \(asked) | \(found) | "
                + "\(overlap) | \(difference) |")
        }
        out.append("")
        out.append("\\* Not in the latency row: no FTS5 `MATCH` finds it (`trigram` needs three characters; on this SQLite, "
            + "a `LIKE '%東京%'` on the trigram table finds nothing either; `unicode61` drops emoji), so FTS5 scans every "
            + "message's text with `instr()`, unranked. Latency p50 and p95 pool every timing of the other queries "
            + "(queries x rounds). FlatCache's query is the search box's text: words end with a space (whole words), "
            + "a prefix is the last word, a phrase is quoted. Largest score difference: over the messages both return "
            + "among their \(SearchRuns.limit), |FlatCache − FTS5| / |FTS5| of `bm25()`.")
        out.append("")
        return out
    }

    private var relevanceSection: [String] {
        var out = ["### \(workload.name): where the top \(SearchRelevance.top) differ\n"]
        let agreeing = relevance.filter(\.agreesUpToTies).map { "`\($0.query.label)`" }
        out.append("Up to the order of ties, the top \(SearchRelevance.top) agree on \(agreeing.count) of \(relevance.count) "
            + "queries\(agreeing.isEmpty ? "" : ": " + agreeing.joined(separator: ", ")). A tie: a message in one top "
            + "\(SearchRelevance.top) that the other scores level with its own #\(SearchRelevance.top) (chat messages are short, "
            + "and many score alike); FlatCache puts the newest first, FTS5's `ORDER BY rank` the lowest rowid. Every score "
            + "differs a little (the table's last column): BM25 weighs a message's length against the average, and FlatCache "
            + "counts each emoji and each CJK or Thai pair as a token where `unicode61` drops emoji and reads a CJK run as one "
            + "word; the `trigram` table counts trigrams among the messages it holds only.\n")
        for row in relevance where !row.tiedMine.isEmpty || !row.tiedTheirs.isEmpty || !row.differences.isEmpty {
            var ties = [String]()
            if !row.tiedMine.isEmpty { ties.append("FlatCache's " + row.tiedMine.map { "#\($0)" }.joined(separator: ", ")) }
            if !row.tiedTheirs.isEmpty { ties.append("FTS5's " + row.tiedTheirs.map { "#\($0)" }.joined(separator: ", ")) }
            out.append("- `\(row.query.label)`: \(row.overlap) of \(row.possible) in both"
                + (ties.isEmpty ? "" : "; tied with the other's #\(SearchRelevance.top): " + ties.joined(separator: " and "))
                + (row.differences.isEmpty ? "." : ":"))
            for line in row.differences { out.append("  - \(line)") }
        }
        out.append("")
        return out
    }

    private var writesTable: [String] {
        var out = ["### \(workload.name): the writes, taken apart (medians of \(writeRounds) rounds, min–max)\n"]
        out.append("| | FlatCache | SQLite FTS5 | FlatCache / FTS5 |")
        out.append("|---|---|---|---|")
        let parts: [(String, KeyPath<WriteThenSearch, Samples>)] = [
            ("write (on disk)", \.write), ("first search that sees it", \.firstSearch), ("the same search again", \.searchAgain),
        ]
        for (row, label) in [(newMessage, "one new message"), (changeLog, "change log (5 edits, 2 deletions)")] {
            for (part, path) in parts {
                guard let mine = row[.flatCache]?[keyPath: path], let theirs = row[.fts5]?[keyPath: path] else { continue }
                out.append("| \(label): \(part) | \(mine.summary) | \(theirs.summary) | "
                    + String(format: "%.2fx", mine.median / theirs.median) + " |")
            }
        }
        out.append("")
        out.append("A new message: one message saved into a channel (a different one each round), with a word no other "
            + "message has, then a search for that word. A change log: 5 messages of one channel edited (each gains a new "
            + "word) and 2 deleted, then a search for the new word, which must find exactly the 5. FlatCache's index "
            + "catches up at the next search; FTS5's triggers index within the write's transaction.")
        out.append("")
        return out
    }

    private var memoryTable: [String] {
        var out = ["### \(workload.name): memory while indexing from scratch, each in a fresh process\n"]
        out.append("| system | peak RSS | growth while indexing | allocations | allocated bytes |")
        out.append("|---|---|---|---|---|")
        for kind in SearchSystemKind.allCases {
            guard let memory = memory[kind] else { continue }
            out.append("| \(kind.rawValue) | \(Report.megabytes(memory.peak)) | \(Report.megabytes(memory.peak - memory.baseline)) | "
                + "\(Report.count(memory.mallocs)) | \(memory.mallocBytes < 0 ? "n/a" : Report.megabytes(memory.mallocBytes)) |")
        }
        out.append("")
        out.append("`flatcache-bench-probe index`: the store put back as it was saved (no index), then the peak reset (`clear_refs`) and "
            + "the resident size read; FlatCache opens a new `ChatCache`, calls `search.blocking.prepare()`, then `close()`, "
            + "which waits for the index to be saved in `search.lines` (the index stays in memory: it is what is measured), SQLite opens a new `DatabasePool` and builds both FTS5 tables in "
            + "one transaction. Growth is the peak (`VmHWM`) minus that size; allocations come from a second run with "
            + "malloc-interposer preloaded.")
        out.append("")
        return out
    }
}
