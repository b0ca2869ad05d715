import FlatCache
import Foundation
import GRDB

/// An outbox in SQLite through GRDB, as an app without FlatCache's would
/// keep one: a table of entries with the fields of FlatCache's outbox lines
/// (docs/format.md), queue order by `rowid`, the request id as primary key
/// (a second send with the same id is ignored, as `Outbox.send` returns the
/// entry it has). A `DatabaseQueue` with GRDB's default journal mode (it sets
/// none, so SQLite's `DELETE` rollback journal) and `PRAGMA synchronous = FULL`:
/// each send is one transaction, committed on disk before it returns.
package final class SQLiteOutbox {
    private let database: DatabaseQueue

    /// Creates (or opens) `outbox.sqlite` in `folder`.
    package init(folder: URL) throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var configuration = GRDB.Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        database = try DatabaseQueue(
            path: folder.appendingPathComponent("outbox.sqlite").path, configuration: configuration)
        try database.write { db in
            try db.execute(sql: """
                CREATE TABLE IF NOT EXISTS outbox (
                    request_id TEXT PRIMARY KEY NOT NULL, channel_url TEXT NOT NULL,
                    queued_at INTEGER NOT NULL, state INTEGER NOT NULL, attempts INTEGER NOT NULL,
                    reason TEXT NOT NULL, message BLOB NOT NULL, server_message BLOB NOT NULL);
                """)
        }
    }

    /// The journal mode in force, as SQLite reports it (`delete` unless changed).
    package func journalMode() throws -> String {
        try database.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") ?? "?" }
    }

    /// Queues `message` as a pending entry, in a transaction of its own; returns once it is committed.
    package func send(_ message: ChatMessage, requestID: String) throws {
        let queuedAt = Int64(Date().timeIntervalSince1970 * 1000)
        let bytes = try message.serialize()
        try database.write { db in
            let statement = try db.cachedStatement(sql: """
                INSERT INTO outbox (request_id, channel_url, queued_at, state, attempts, reason, message, server_message)
                VALUES (?, ?, ?, 0, 0, '', ?, X'') ON CONFLICT(request_id) DO NOTHING
                """)
            try statement.execute(arguments: [requestID, message.channelURL, queuedAt, bytes])
        }
    }

    /// How many entries each channel holds: what a run checks after its timing.
    package func countsByChannel() throws -> [String: Int] {
        try database.read { db in
            let rows = try Row.fetchAll(db, sql: "SELECT channel_url, COUNT(*) FROM outbox GROUP BY channel_url")
            return Dictionary(uniqueKeysWithValues: rows.map { ($0[0] as String, $0[1] as Int) })
        }
    }
}
