import FlatCache
import Foundation
import GRDB

/// SQLite FTS5 through GRDB over the same messages (``FTS5Schema``): WAL,
/// `synchronous = OFF` (FlatCache's durability off), one transaction per write.
/// Hits are decoded from their payloads, as FlatCache's carry their message.
package final class FTS5SearchSystem: SearchSystem {
    private let path: String
    private let configuration: GRDB.Configuration
    private var database: DatabasePool?
    /// The database as ``store(_:)`` left it: no FTS5 table yet.
    private let pristine: PristineCopy

    package init(folder: URL) throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        path = folder.appendingPathComponent("search.sqlite").path
        pristine = PristineCopy(of: URL(fileURLWithPath: path))
        var configuration = GRDB.Configuration()
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA synchronous = OFF") }
        self.configuration = configuration
        let database = try DatabasePool(path: path, configuration: configuration)
        try database.writeWithoutTransaction { db in
            _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: FTS5Schema.messageTable)
        }
        self.database = database
    }

    /// The SQLite GRDB links (the system's on Linux), and whether it has FTS5: what the report names.
    package static func sqliteDescription() throws -> String {
        try DatabaseQueue().read { db in
            let version = try String.fetchOne(db, sql: "SELECT sqlite_version()") ?? "?"
            let fts5 = try Bool.fetchOne(db, sql: "SELECT sqlite_compileoption_used('ENABLE_FTS5')") ?? false
            return "SQLite \(version) through GRDB, FTS5 \(fts5 ? "compiled in" : "missing")"
        }
    }

    package func store(_ workload: Workload) throws {
        let database = try opened()
        for messages in workload.messages {
            try database.write { db in
                let statement = try db.cachedStatement(sql: FTS5Schema.upsert)
                for message in messages { try statement.execute(arguments: try Self.arguments(message)) }
            }
        }
        try close()
        try pristine.take()
        self.database = try DatabasePool(path: path, configuration: configuration)
    }

    /// Closes every connection and puts back the database ``store(_:)`` left (no FTS5 table, no WAL).
    package func dropIndex() throws {
        try close()
        try pristine.restore(removing: ["-wal", "-shm"].map { URL(fileURLWithPath: path + $0) })
    }

    /// Opens the database afresh and builds both tables in one transaction.
    package func indexFromScratch() throws {
        let database = try DatabasePool(path: path, configuration: configuration)
        self.database = database
        try database.write { db in try db.execute(sql: FTS5Schema.createIndex) }
    }

    package func indexedMessageCount() throws -> Int {
        try opened().read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM message_fts_docsize") ?? 0 }
    }

    package func search(_ query: SearchBenchQuery, limit: Int) throws -> [SearchBenchHit] {
        try opened().read { db in
            var hits = [SearchBenchHit]()
            switch query.fts5 {
            case .match(let match, let table):
                let rows = try Row.fetchCursor(db.cachedStatement(sql: FTS5Schema.search(table)), arguments: [match, limit])
                while let row = try rows.next() {
                    let message = try row.withUnsafeData(atIndex: 0) { try ChatMessage(serializedData: $0 ?? Data()) }
                    let marked: String = row[1]
                    guard !marked.isEmpty else { throw BenchmarkError("FTS5 highlighted nothing in \(message.messageID)") }
                    hits.append(SearchBenchHit(messageID: message.messageID, score: -(row[2] as Double)))
                }
            case .scan(let text):
                let rows = try Row.fetchCursor(db.cachedStatement(sql: FTS5Schema.scan), arguments: [text, limit])
                while let row = try rows.next() {
                    let message = try row.withUnsafeData(atIndex: 0) { try ChatMessage(serializedData: $0 ?? Data()) }
                    hits.append(SearchBenchHit(messageID: message.messageID, score: 0))
                }
            }
            return hits
        }
    }

    package func score(of message: ChatMessage, for query: SearchBenchQuery) throws -> Double? {
        guard case .match(let match, let table) = query.fts5 else { return nil }
        return try opened().read { db in
            try Double.fetchOne(db.cachedStatement(sql: FTS5Schema.score(table)), arguments: [match, message.messageID])
        }.map { -$0 }
    }

    package func save(_ message: ChatMessage) throws {
        try opened().write { db in try db.cachedStatement(sql: FTS5Schema.upsert).execute(arguments: try Self.arguments(message)) }
    }

    package func apply(_ log: ChangeLog) throws {
        try opened().write { db in
            let upsert = try db.cachedStatement(sql: FTS5Schema.upsert)
            for message in log.updated { try upsert.execute(arguments: try Self.arguments(message)) }
            let delete = try db.cachedStatement(sql: "DELETE FROM message WHERE message_id = ?")
            for id in log.deleted { try delete.execute(arguments: [id]) }
        }
    }

    package func indexBytes() throws -> (bytes: Int, how: String) {
        try opened().read { db in
            let tables = try Row.fetchAll(db, sql: FTS5Schema.indexPages).map { row -> (String, Int) in (row[0], row[1]) }
            let text = try Int.fetchOne(db, sql: "SELECT sum(length(CAST(text AS BLOB))) FROM message") ?? 0
            let parts = tables.map { "`\($0.0)_*` \(Self.megabytes($0.1))" }.joined(separator: ", ")
            return (tables.reduce(0) { $0 + $1.1 },
                "pages of FTS5's shadow tables (`dbstat`): \(parts); not counted: the `text` column they index from, "
                    + "\(Self.megabytes(text)) of text in the message table beside the payloads")
        }
    }

    /// Closes every connection, the WAL checkpointed into the database first.
    package func close() throws {
        try database?.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        try database?.close()
        database = nil
    }

    private func opened() throws -> DatabasePool {
        guard let database else { throw BenchmarkError("the FTS5 database was used while closed") }
        return database
    }

    private static func arguments(_ message: ChatMessage) throws -> StatementArguments {
        [message.messageID, message.channelURL, message.createdAt, message.text, try message.serialize()]
    }

    private static func megabytes(_ bytes: Int) -> String { String(format: "%.1f MB", Double(bytes) / 1e6) }
}
