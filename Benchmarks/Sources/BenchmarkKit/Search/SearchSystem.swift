import FlatCache
import Foundation

/// A way of searching cached messages, driven through what a search screen needs.
/// Both systems hold the same messages (``Workload/withSearchText(seed:)``).
package protocol SearchSystem: AnyObject {
    /// Stores `workload`'s channels and messages, with no index yet (untimed set-up).
    func store(_ workload: Workload) throws
    /// Closes the store and puts it back as ``store(_:)`` left it (a copy taken then):
    /// the next ``indexFromScratch()`` starts with no index at all, in memory or on disk.
    func dropIndex() throws
    /// Opens the store and indexes every stored message; returns once every one is searchable.
    func indexFromScratch() throws
    /// How many messages the index holds (untimed: a check).
    func indexedMessageCount() throws -> Int
    /// The first `limit` hits of `query`, best first (or newest first where the system cannot rank it).
    func search(_ query: SearchBenchQuery, limit: Int) throws -> [SearchBenchHit]
    /// `message`'s score for `query`, or `nil` when the system does not find it: why two systems rank differently.
    func score(of message: ChatMessage, for query: SearchBenchQuery) throws -> Double?
    /// Saves one message, as the app would when it arrives (on disk when this returns).
    func save(_ message: ChatMessage) throws
    /// Applies one channel's change log, as the app would (on disk when this returns).
    func apply(_ log: ChangeLog) throws
    /// What the index adds to the store on disk, in bytes, and how it was counted.
    func indexBytes() throws -> (bytes: Int, how: String)
    /// Closes the store.
    func close() throws
}

/// One hit: the message found and its BM25 score (higher is better; 0 where unranked).
package struct SearchBenchHit: Sendable, Hashable {
    package let messageID: Int64
    package let score: Double

    package init(messageID: Int64, score: Double) {
        self.messageID = messageID
        self.score = score
    }
}

/// The systems the search rows compare.
package enum SearchSystemKind: String, CaseIterable, Sendable {
    case flatCache = "FlatCache"
    case fts5 = "SQLite FTS5"

    /// The system's store in `folder` (created when needed).
    package func open(in folder: URL) throws -> any SearchSystem {
        switch self {
        case .flatCache: try FlatCacheSearchSystem(folder: folder)
        case .fts5: try FTS5SearchSystem(folder: folder)
        }
    }

    /// A name without spaces or punctuation, for folders and the probe's arguments.
    package var slug: String { rawValue.filter { $0.isLetter || $0.isNumber } }

    package init?(slug: String) {
        guard let kind = Self.allCases.first(where: { $0.slug == slug }) else { return nil }
        self = kind
    }
}
