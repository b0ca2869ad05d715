import FlatCache
import Foundation
import GRDB

/// The "advanced" guide's SQLite cache through GRDB: a message table keyed by
/// id with an index on channel and time, WAL, one transaction per channel.
/// Payloads are the same serialized records FlatCache stores.
package final class SQLiteSystem: CacheSystem {
    private let path: String
    private let configuration: GRDB.Configuration
    private let messageLimit: Int?
    private var database: DatabasePool
    /// The pool ``openAndLoadChannelList()`` last opened, until ``closeOpened()``.
    private var opened: DatabasePool?

    /// With `messageLimit`, each write keeps only a channel's newest `messageLimit` messages, as FlatCache does.
    package init(folder: URL, durable: Bool, messageLimit: Int?) throws {
        self.messageLimit = messageLimit
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        path = folder.appendingPathComponent("cache.sqlite").path
        var configuration = GRDB.Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = \(durable ? "FULL" : "OFF")")
        }
        self.configuration = configuration
        database = try DatabasePool(path: path, configuration: configuration)
        try database.writeWithoutTransaction { db in
            _ = try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
            try db.execute(sql: """
                CREATE TABLE IF NOT EXISTS message (
                    message_id INTEGER PRIMARY KEY, channel_url TEXT NOT NULL,
                    message_ts INTEGER NOT NULL, payload BLOB NOT NULL);
                CREATE INDEX IF NOT EXISTS message_channel_ts ON message(channel_url, message_ts);
                CREATE TABLE IF NOT EXISTS channel (
                    channel_url TEXT PRIMARY KEY, last_message_ts INTEGER NOT NULL, payload BLOB NOT NULL);
                """)
        }
    }

    /// Closes the pool ``openAndLoadChannelList()`` last opened (its connections close as it goes).
    package func closeOpened() throws {
        opened = nil
    }

    package func reopen() throws {
        database = try DatabasePool(path: path, configuration: configuration)
    }

    package func saveEverything(_ workload: Workload) throws {
        try database.write { db in
            let statement = try db.cachedStatement(
                sql: "INSERT OR REPLACE INTO channel (channel_url, last_message_ts, payload) VALUES (?, ?, ?)")
            for channel in workload.channels {
                try statement.execute(arguments: [channel.channelURL, channel.lastMessageAt, try channel.serialize()])
            }
        }
        for messages in workload.messages {
            try database.write { db in try upsert(messages, in: db) }
        }
    }

    package func loadEveryChannel(_ urls: [String]) throws -> Int {
        // One reader per core, each with its own connection, as FlatCache reads on every core.
        let width = ProcessInfo.processInfo.activeProcessorCount
        let counts = Counts(width)
        let database = database
        DispatchQueue.concurrentPerform(iterations: width) { part in
            counts[part] = Result {
                try Self.loadChannels(stride(from: part, to: urls.count, by: width).map { urls[$0] }, from: database)
            }
        }
        return try counts.total()
    }

    package func loadAgain(_ urls: [String], times: Int) throws -> Int {
        var total = 0
        for _ in 0..<times { total += try Self.loadChannels(urls, from: database) }
        return total
    }

    private static func loadChannels(_ urls: [String], from database: DatabasePool) throws -> Int {
        try database.read { db in
            let statement = try db.cachedStatement(
                sql: "SELECT payload FROM message WHERE channel_url = ? ORDER BY message_ts, message_id")
            var total = 0
            for url in urls {
                total += try decode(Row.fetchCursor(statement, arguments: [url])).count
            }
            return total
        }
    }

    package func upsert(_ messages: [ChatMessage]) throws {
        for message in messages {
            try database.write { db in try upsert([message], in: db) }
        }
    }

    package func apply(_ changeLogs: [ChangeLog]) throws {
        for log in changeLogs {
            try database.write { db in
                try upsert(log.updated, in: db)
                let delete = try db.cachedStatement(sql: "DELETE FROM message WHERE message_id = ?")
                for id in log.deleted { try delete.execute(arguments: [id]) }
            }
        }
    }

    package func loadPages(_ queries: [PageQuery]) throws -> Int {
        try database.read { db in
            let statement = try db.cachedStatement(sql: """
                SELECT payload FROM message WHERE channel_url = ? AND message_ts < ?
                ORDER BY message_ts DESC, message_id DESC LIMIT 30
                """)
            var total = 0
            for query in queries {
                let page = try Self.decode(Row.fetchCursor(statement, arguments: [query.channelURL, query.before]))
                total += page.reversed().count
            }
            return total
        }
    }

    /// SQLite's own check (`PRAGMA integrity_check`: every page, every index entry),
    /// then every payload decoded: what `flatcache verify` does, the SQLite way.
    package func verifyEverything() throws -> Int {
        try database.read { db in
            let problems = try String.fetchAll(db, sql: "PRAGMA integrity_check")
            guard problems == ["ok"] else { throw BenchmarkError("integrity_check: \(problems.prefix(3))") }
            return try Self.decode(Row.fetchCursor(db, sql: "SELECT payload FROM message")).count
        }
    }

    package func openAndLoadChannelList() throws -> Int {
        let fresh = try DatabasePool(path: path, configuration: configuration)
        opened = fresh
        return try fresh.read { db in
            let rows = try Row.fetchCursor(db, sql: "SELECT payload FROM channel ORDER BY last_message_ts DESC, channel_url")
            var channels = [ChatChannel]()
            while let row = try rows.next() {
                channels.append(try row.withUnsafeData(atIndex: 0) { try ChatChannel(serializedData: $0 ?? Data()) })
            }
            return channels.count
        }
    }

    private func upsert(_ messages: [ChatMessage], in db: Database) throws {
        let statement = try db.cachedStatement(
            sql: "INSERT OR REPLACE INTO message (message_id, channel_url, message_ts, payload) VALUES (?, ?, ?, ?)")
        for message in messages {
            try statement.execute(arguments: [message.messageID, message.channelURL, message.createdAt, try message.serialize()])
        }
        guard let messageLimit else { return }
        // Retention: drop what falls past the channel's newest `messageLimit`.
        let trim = try db.cachedStatement(sql: """
            DELETE FROM message WHERE message_id IN (SELECT message_id FROM message WHERE channel_url = ?
            ORDER BY message_ts DESC, message_id DESC LIMIT -1 OFFSET ?)
            """)
        for url in Set(messages.map(\.channelURL)) { try trim.execute(arguments: [url, messageLimit]) }
    }

    /// Decodes each row's payload without copying it out of SQLite first (GRDB's fastest path).
    private static func decode(_ rows: RowCursor) throws -> [ChatMessage] {
        var messages = [ChatMessage]()
        while let row = try rows.next() {
            messages.append(try row.withUnsafeData(atIndex: 0) { try ChatMessage(serializedData: $0 ?? Data()) })
        }
        return messages
    }
}

/// One result per parallel reader; each slot is written by one reader only.
private final class Counts: @unchecked Sendable {
    private let slots: UnsafeMutableBufferPointer<Result<Int, any Error>>
    init(_ count: Int) {
        slots = .allocate(capacity: count)
        slots.initialize(repeating: .success(0))
    }
    deinit {
        _ = slots.deinitialize()
        slots.deallocate()
    }
    subscript(index: Int) -> Result<Int, any Error> {
        get { slots[index] }
        set { slots[index] = newValue }
    }
    func total() throws -> Int { try slots.reduce(0) { $0 + (try $1.get()) } }
}
