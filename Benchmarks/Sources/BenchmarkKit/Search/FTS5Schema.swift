/// The SQL of the FTS5 anchor: a message table that keeps each message's
/// text beside its payload, and two external-content FTS5 tables over that
/// text, kept current by triggers (the FTS5 documentation's pattern).
///
/// - `message_fts`, `unicode61 remove_diacritics 2`: every message. Words
///   folded for case and accents, as FlatCache folds them (not for width).
/// - `message_tri`, `trigram`: only the messages with a script written
///   without spaces (Chinese, Japanese, Thai, Lao, Khmer, Myanmar; the
///   ranges FlatCache's tokenizer pairs up), which `unicode61` reads as one
///   long word. Indexing every message there would more than double FTS5's
///   cost for the few that need it; a `GLOB` on the code point ranges picks them.
///
/// No `prefix=` option: it speeds prefix queries and grows the index; both sides keep their defaults.
package enum FTS5Schema {
    static let messageTable = """
        CREATE TABLE IF NOT EXISTS message (
            message_id INTEGER PRIMARY KEY, channel_url TEXT NOT NULL, message_ts INTEGER NOT NULL,
            text TEXT NOT NULL, payload BLOB NOT NULL);
        CREATE INDEX IF NOT EXISTS message_channel_ts ON message(channel_url, message_ts);
        """

    /// An insert that updates a message already there (an `UPDATE`, so the
    /// update trigger runs, not a delete and an insert).
    static let upsert = """
        INSERT INTO message (message_id, channel_url, message_ts, text, payload) VALUES (?, ?, ?, ?, ?)
        ON CONFLICT(message_id) DO UPDATE SET channel_url = excluded.channel_url, message_ts = excluded.message_ts,
            text = excluded.text, payload = excluded.payload
        """

    /// The code points of the scripts written without spaces, as FlatCache's tokenizer lists them.
    static let unspacedRanges: [ClosedRange<UInt32>] = [
        0x0E00...0x0EFF, 0x1000...0x109F, 0xA9E0...0xA9FF, 0xAA60...0xAA7F, 0x1780...0x17FF, 0x19E0...0x19FF,
        0x2E80...0x2FDF, 0x3005...0x3007, 0x3021...0x3029, 0x3038...0x303B, 0x3041...0x30FF, 0x31F0...0x31FF,
        0xFF66...0xFF9F, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xF900...0xFAFF, 0x1AFF0...0x1B16F, 0x20000...0x323AF,
    ]

    /// Whether `text` goes into the `trigram` table: what the triggers' `GLOB` decides, in Swift.
    package static func hasUnspacedScript(_ text: String) -> Bool {
        text.unicodeScalars.contains { scalar in unspacedRanges.contains { $0.contains(scalar.value) } }
    }

    /// A `GLOB` pattern that matches text with at least one character of an unspaced script.
    static let unspacedPattern: String = {
        var pattern = String.UnicodeScalarView()
        pattern.append(contentsOf: "*[".unicodeScalars)
        for range in unspacedRanges {
            if let low = Unicode.Scalar(range.lowerBound), let high = Unicode.Scalar(range.upperBound) {
                pattern.append(low)
                pattern.append("-")
                pattern.append(high)
            }
        }
        pattern.append(contentsOf: "]*".unicodeScalars)
        return String(pattern)
    }()

    /// Both FTS5 tables, their triggers, and every message already stored indexed.
    static var createIndex: String {
        let unspaced = "GLOB '\(unspacedPattern)'"
        return """
            CREATE VIRTUAL TABLE message_fts USING fts5(
                text, content = 'message', content_rowid = 'message_id', tokenize = 'unicode61 remove_diacritics 2');
            CREATE VIRTUAL TABLE message_tri USING fts5(
                text, content = 'message', content_rowid = 'message_id', tokenize = 'trigram');
            CREATE TRIGGER message_index_insert AFTER INSERT ON message BEGIN
                INSERT INTO message_fts (rowid, text) VALUES (new.message_id, new.text);
                INSERT INTO message_tri (rowid, text) SELECT new.message_id, new.text WHERE new.text \(unspaced);
            END;
            CREATE TRIGGER message_index_delete AFTER DELETE ON message BEGIN
                INSERT INTO message_fts (message_fts, rowid, text) VALUES ('delete', old.message_id, old.text);
                INSERT INTO message_tri (message_tri, rowid, text)
                    SELECT 'delete', old.message_id, old.text WHERE old.text \(unspaced);
            END;
            CREATE TRIGGER message_index_update AFTER UPDATE OF text ON message BEGIN
                INSERT INTO message_fts (message_fts, rowid, text) VALUES ('delete', old.message_id, old.text);
                INSERT INTO message_tri (message_tri, rowid, text)
                    SELECT 'delete', old.message_id, old.text WHERE old.text \(unspaced);
                INSERT INTO message_fts (rowid, text) VALUES (new.message_id, new.text);
                INSERT INTO message_tri (rowid, text) SELECT new.message_id, new.text WHERE new.text \(unspaced);
            END;
            INSERT INTO message_fts (message_fts) VALUES ('rebuild');
            INSERT INTO message_tri (rowid, text) SELECT message_id, text FROM message WHERE text \(unspaced);
            """
    }

    /// The first `limit` hits of a `MATCH` on `table`, best first by `bm25()`, with their
    /// payloads and highlighted text (as FlatCache's hits carry their message and highlights).
    static func search(_ table: SearchBenchQuery.FTS5Table) -> String {
        """
        SELECT m.payload, f.marked, f.rank FROM (
            SELECT rowid AS id, rank, highlight(\(table.rawValue), 0, char(2), char(3)) AS marked
            FROM \(table.rawValue) WHERE \(table.rawValue) MATCH ? ORDER BY rank LIMIT ?) AS f
        JOIN message AS m ON m.message_id = f.id ORDER BY f.rank
        """
    }

    /// One message's `bm25()` for a `MATCH` on `table`.
    static func score(_ table: SearchBenchQuery.FTS5Table) -> String {
        "SELECT rank FROM \(table.rawValue) WHERE \(table.rawValue) MATCH ? AND rowid = ?"
    }

    /// What no `MATCH` finds: every message's text scanned, newest first.
    static let scan = "SELECT payload FROM message WHERE instr(text, ?) > 0 ORDER BY message_ts DESC LIMIT ?"

    /// The pages of both FTS5 tables' shadow tables (`dbstat`), by table.
    static let indexPages = """
        SELECT substr(name, 1, 11) AS fts_table, sum(pgsize) FROM dbstat
        WHERE name LIKE 'message\\_fts\\_%' ESCAPE '\\' OR name LIKE 'message\\_tri\\_%' ESCAPE '\\'
        GROUP BY fts_table
        """
}
