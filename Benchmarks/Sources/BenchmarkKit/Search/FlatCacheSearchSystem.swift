import FlatCache
import Foundation

/// FlatCache's `cache.search`, through its blocking twins (the benchmark's
/// thread may block): durability off and no size limit, as the main table's
/// FlatCache; writes timed until `flush()` returns.
package final class FlatCacheSearchSystem: SearchSystem {
    typealias Cache = ChatCache<ChatMessage, ChatChannel, ChatUser>

    private let folder: URL
    private let configuration = Configuration(maxMessagesPerChannel: 1_000_000, durability: .atomic, sizeLimit: nil)
    private var cache: Cache?
    /// The folder as ``store(_:)`` left it: no index has seen it.
    private let pristine: PristineCopy
    /// The folder's files and their sizes when the index was last dropped: what indexing may add to.
    private var filesBeforeIndex = [String: Int]()

    package init(folder: URL) throws {
        self.folder = folder
        pristine = PristineCopy(of: folder)
    }

    package func store(_ workload: Workload) throws {
        let cache = try Cache(directory: folder, configuration: configuration)
        try cache.channels.blocking.replace(with: workload.channels)
        for (channel, messages) in zip(workload.channels, workload.messages) {
            try cache.messages.blocking.replace(messages, in: channel.channelURL)
        }
        try cache.blocking.close()
        try pristine.take()
    }

    /// Closes the instance (the index lives in its memory today) and puts back the folder
    /// ``store(_:)`` left, so that an index on disk, should one come, is gone too.
    /// Whatever the folder gains from here on counts as index bytes.
    package func dropIndex() throws {
        try close()
        try pristine.restore()
        filesBeforeIndex = try FolderFiles.sizes(in: folder)
    }

    /// A fresh instance on the folder, as an app's launch, `search.blocking.prepare()`, then
    /// `close()`, which waits for the index to be saved in `search.lines` (FTS5's build writes its
    /// tables too).
    package func indexFromScratch() throws {
        let cache = try Cache(directory: folder, configuration: configuration)
        self.cache = cache
        try cache.search.blocking.prepare()
        try cache.blocking.close()
    }

    package func indexedMessageCount() throws -> Int {
        try opened().search.blocking.progress().indexedMessages
    }

    package func search(_ query: SearchBenchQuery, limit: Int) throws -> [SearchBenchHit] {
        try opened().search.blocking.messages(matching: query.flatCacheText, limit: limit).hits.map {
            SearchBenchHit(messageID: $0.message.messageID, score: $0.score)
        }
    }

    /// The same query narrowed to `message`'s channel and time (the weights stay the index's whole).
    package func score(of message: ChatMessage, for query: SearchBenchQuery) throws -> Double? {
        let filter = SearchFilter(
            channelURLs: [message.channelURL], createdSince: message.createdAt, createdBefore: message.createdAt + 1)
        return try opened().search.blocking.messages(matching: query.flatCacheText, filter: filter, limit: 100).hits
            .first { $0.message.messageID == message.messageID }?.score
    }

    package func save(_ message: ChatMessage) throws {
        let cache = try opened()
        try cache.messages.blocking.save(CollectionOfOne(message))
        try cache.blocking.flush()
    }

    package func apply(_ log: ChangeLog) throws {
        let cache = try opened()
        try cache.messages.blocking.applyChangeLog(updated: log.updated, deletedMessageIDs: log.deleted, in: log.channelURL)
        try cache.blocking.flush()
    }

    package func indexBytes() throws -> (bytes: Int, how: String) {
        let now = try FolderFiles.sizes(in: folder)
        let grown = now.filter { path, size in size > filesBeforeIndex[path] ?? 0 }
        let bytes = grown.reduce(0) { $0 + $1.value - (filesBeforeIndex[$1.key] ?? 0) }
        let index = grown.filter { $0.key.hasPrefix("search.lines") }.reduce(0) { $0 + $1.value }
        let names = grown.keys.sorted().prefix(5).joined(separator: ", ")
        return (index, grown.isEmpty
            ? "the folder gained no bytes while the index was built"
            : "the saved index, `search.lines` and its sidecar (the folder also gained or grew: \(names); \(bytes) bytes in all, "
                + "`usage.lines` among them, which `close()` writes)")
    }

    package func close() throws {
        try cache?.blocking.close()
        cache = nil
    }

    private func opened() throws -> Cache {
        guard let cache else { throw BenchmarkError("FlatCache's search was used before its index was built") }
        return cache
    }
}
