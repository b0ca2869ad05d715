import Foundation

/// One cache's search index in memory, kept current with its messages: what
/// ``MessageSearch`` asks.
///
/// - The first use builds it in the background, one channel at a time;
///   searches meanwhile answer from what is indexed so far.
/// - This process's changes reach it through the folder's ``ChangeHub``
///   (a ``ChangeLedger`` of the files that changed), and are indexed before
///   the next search answers: memory's changes waiting for write-behind
///   included.
/// - Other processes' writes show as message files with other stamps than
///   those indexed (one `stat` a channel at each search).
/// - Every hit is checked against the message as a load returns it now, so
///   a message deleted or edited since it was indexed is never shown for words it no longer has.
///
/// Concurrency: all its state is confined to `queue`, a serial queue of its
/// own (not Swift's cooperative pool: indexing reads files). The build is
/// many small items on it, so that searches run between them.
final class SearchService<Message: MessageRecord>: @unchecked Sendable {
    typealias Index = SearchIndex<Message.MessageID>

    private let store: MessageStore<Message>
    private let ledger = ChangeLedger()
    private let queue = DispatchQueue(label: "FlatCache.Search", qos: .utility)

    // Confined to `queue`.
    private var index = Index()
    /// What was indexed of each message file, by path.
    private var indexed = [String: IndexedChannel]()
    /// Message files the background build has still to index, in its order, and as a set.
    private var backlog = [RecordFile]()
    private var waiting = Set<String>()
    private var started = false
    /// Calls of ``whenComplete(_:)`` waiting for the backlog to empty.
    private var completionWaiters = [@Sendable (Result<SearchProgress, FlatCacheError>) -> Void]()

    /// What the index holds of one message file.
    private struct IndexedChannel {
        /// The channel's URL, once a message of it was seen.
        var channelURL: String?
        /// The data file's stamp when it was read.
        var stamp: FileStamp?
        /// A digest of each indexed message's searchable fields, by id: what tells an edit.
        var fingerprints: [Message.MessageID: Int]
    }

    /// A few dozen channels a build item indexes before it lets searches run.
    private static var channelsPerItem: Int { 16 }
    /// More channels than this changed by other writers at once are indexed in the background.
    private static var catchUpLimit: Int { 64 }

    init(store: MessageStore<Message>) {
        self.store = store.using(.memoryAndDisk)
    }

    deinit {
        store.engine.hub.remove(ledger)
    }

    // MARK: - Calls (each runs on `queue`)

    /// Runs `work` on the index's queue, for a caller that may block (never on `queue`).
    func blocking<T>(_ work: () throws(FlatCacheError) -> T) throws(FlatCacheError) -> T {
        var result: Result<T, FlatCacheError>?
        queue.sync { result = Result { () throws(FlatCacheError) in try work() } }
        return try result!.get()
    }

    /// Runs `work` on the index's queue for an `async` caller; cancelling the
    /// caller's task sets the flag `work` is given.
    func run<T: Sendable>(
        _ work: @escaping @Sendable (_ cancelled: Flag) throws(FlatCacheError) -> T
    ) async throws(FlatCacheError) -> T {
        let cancelled = Flag()
        let queue = queue
        return try await withTaskCancellationHandler {
            await BlockingWork.result(on: queue) { () throws(FlatCacheError) -> T in try work(cancelled) }
        } onCancel: {
            cancelled.set()
        }.get()
    }

    /// What a search found: a page of hits, the cursor to the next page, how far the index is.
    struct Answer: Sendable {
        var hits: [SearchHit<Message>]
        var next: Index.PageCursor?
        var progress: SearchProgress
    }

    /// Up to `request.limit` hits of `request`, after `cursor`, once every
    /// change is indexed; `nil` when `isCancelled` said so first. On `queue`.
    ///
    /// - Throws: A file-system error.
    func search(
        _ request: SearchRequest, after cursor: Index.PageCursor?, isCancelled: () -> Bool
    ) throws(FlatCacheError) -> Answer? {
        dispatchPrecondition(condition: .onQueue(queue))
        if isCancelled() { return nil }
        try startIfNeeded()
        try catchUp()
        let query = SearchQuery(request.text)
        // One more than the page: a next page is offered only when there is one.
        guard
            var found = try? index.search(
                query, filter: Self.filter(request.filter), order: request.order == .relevance ? .relevance : .newestFirst,
                limit: request.limit + 1, after: cursor, isCancelled: isCancelled)
        else { return nil }
        var next: Index.PageCursor?
        if found.count > request.limit {
            found.removeLast(found.count - request.limit)
            next = found.last.flatMap(index.cursor(after:))
        }
        return Answer(hits: try hits(found, query: query), next: next, progress: progress)
    }

    /// The progress once the build has indexed every channel, for a caller that may block (never on `queue`).
    func waitUntilComplete() throws(FlatCacheError) -> SearchProgress {
        let done = DispatchSemaphore(value: 0)
        let result = Slots<Result<SearchProgress, FlatCacheError>?>(repeating: nil, count: 1)
        queue.async { self.whenComplete { outcome in
            result[0] = outcome
            done.signal()
        } }
        done.wait()
        return try result[0]!.get()
    }

    /// The progress once the build has indexed every channel, for an `async`
    /// caller; `CancellationError` as soon as its task is cancelled.
    func waitUntilComplete() async throws -> SearchProgress {
        try await CancellableWait.result { finish in queue.async { self.whenComplete { finish($0.mapError { $0 }) } } }
    }

    /// How far the index is: on `queue`.
    var progress: SearchProgress {
        dispatchPrecondition(condition: .onQueue(queue))
        return SearchProgress(
            indexedChannels: indexed.count - waiting.intersection(indexed.keys).count,
            channelCount: indexed.keys.count + waiting.subtracting(indexed.keys).count,
            indexedMessages: index.liveCount, isComplete: started && waiting.isEmpty)
    }

    /// Starts the build when it has not started: on `queue`.
    func startIfNeeded() throws(FlatCacheError) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !started else { return }
        // Listening first: a file written while the folder is listed is then indexed twice, never missed.
        store.engine.hub.listenToAll(ledger)
        enqueue(try messageFiles())
        started = true
        scheduleBuild()
    }

    /// Calls `done` on `queue` once the build has indexed every channel (at once when it has).
    func whenComplete(_ done: @escaping @Sendable (Result<SearchProgress, FlatCacheError>) -> Void) {
        dispatchPrecondition(condition: .onQueue(queue))
        do {
            try startIfNeeded()
            try catchUp()
        } catch {
            return done(.failure(error))
        }
        if waiting.isEmpty { done(.success(progress)) } else { completionWaiters.append(done) }
    }

    // MARK: - Building

    private func enqueue(_ files: [RecordFile]) {
        for file in files where waiting.insert(file.path).inserted { backlog.append(file) }
    }

    /// Indexes the next few channels of the backlog, then lets searches run before the next few.
    private func scheduleBuild() {
        queue.async { [weak self] in self?.buildStep() }
    }

    private func buildStep() {
        var done = 0
        while done < Self.channelsPerItem, !backlog.isEmpty {
            let file = backlog.removeFirst()
            guard waiting.remove(file.path) != nil else { continue }
            done += 1
            do {
                try reindex(file)
            } catch {
                // A file that cannot be read now is tried again when it next changes; the log says which.
                store.storage.logger.warning(
                    "FlatCache could not index a channel for search", metadata: ["file": "\(file.path)", "error": "\(error)"])
            }
        }
        compactIfWorthIt()
        if backlog.isEmpty || waiting.isEmpty { finishBuild() } else { scheduleBuild() }
    }

    /// Ends the build: tells those waiting for it.
    private func finishBuild() {
        backlog = []
        waiting = []
        let waiters = completionWaiters
        completionWaiters = []
        let finished = progress
        for waiter in waiters { waiter(.success(finished)) }
    }

    // MARK: - Catching up

    /// Indexes what changed since the last search: this process's changes, then other writers' (by stamp).
    private func catchUp() throws(FlatCacheError) {
        let changed = ledger.take()
        var dirty = Set(changed.paths.filter { $0.hasPrefix(store.layout.messagesDirectory + "/") && $0.hasSuffix(".lines") })
        let files = try messageFiles()
        let present = Set(files.map(\.path))
        var others = [RecordFile]()
        for file in files where !dirty.contains(file.path) {
            guard let known = indexed[file.path] else {
                if !waiting.contains(file.path) { others.append(file) }  // else the build has it still to do
                continue
            }
            if try store.engine.folders.dataStamp(of: file) != known.stamp { others.append(file) }
        }
        for path in indexed.keys where !present.contains(path) { dirty.insert(path) }
        if changed.everything || others.count > Self.catchUpLimit {
            // A whole folder changed (emptied, a new key, another process's big write): in the background.
            enqueue(changed.everything ? files : others)
            if !changed.everything { others = [] }
            scheduleBuild()
        }
        for file in others { dirty.insert(file.path) }
        // A build with little left is finished now: a small cache's first search sees everything.
        if waiting.count <= Self.catchUpLimit {
            for file in backlog where waiting.contains(file.path) { dirty.insert(file.path) }
        }
        for path in dirty.sorted() {
            waiting.remove(path)
            let name = String(path.split(separator: "/").last ?? "")
            try reindex(store.layout.messagesFile(named: name))
        }
        if waiting.isEmpty { finishBuild() }
        compactIfWorthIt()
    }

    /// The message files on disk, and those memory holds that may not be written yet.
    private func messageFiles() throws(FlatCacheError) -> [RecordFile] {
        var files = try store.layout.messageFiles()
        let onDisk = Set(files.map(\.path))
        let folder = store.layout.messagesDirectory + "/"
        for path in store.engine.heldPaths() where path.hasPrefix(folder) && path.hasSuffix(".lines") && !onDisk.contains(path) {
            files.append(store.layout.messagesFile(named: String(path.dropFirst(folder.count))))
        }
        return files
    }

    /// Brings the index of one message file in line with what a load returns now.
    private func reindex(_ file: RecordFile) throws(FlatCacheError) {
        let stamp = try store.engine.folders.dataStamp(of: file)
        let records: [Message]
        if stamp == nil && !store.engine.holds(file) {
            records = []
        } else if store.policy.isExpired(file) {
            records = []
        } else {
            records = store.newest(try store.engine.recordsLeavingMemory(file, rule: store.appendRule, stamp: stamp) ?? [])
        }
        var old = indexed[file.path]?.fingerprints ?? [:]
        var fingerprints = [Message.MessageID: Int](minimumCapacity: records.count)
        var changed = [Index.Message]()
        for message in records {
            guard let text = message.searchableText, !text.isEmpty else { continue }
            let sender = message.senderID ?? ""
            var hasher = Hasher()
            hasher.combine(text)
            hasher.combine(sender)
            hasher.combine(message.createdAt)
            let fingerprint = hasher.finalize()
            fingerprints[message.messageID] = fingerprint
            if old.removeValue(forKey: message.messageID) != fingerprint {
                changed.append(Index.Message(key: message.messageID, sender: sender, createdAt: message.createdAt, text: text))
            }
        }
        let channelURL = records.first?.channelURL ?? indexed[file.path]?.channelURL
        if let channelURL {
            if !old.isEmpty { index.remove(old.keys, from: channelURL) }
            if !changed.isEmpty { index.upsert(changed, in: channelURL) }
        }
        indexed[file.path] = records.isEmpty && stamp == nil
            ? nil : IndexedChannel(channelURL: channelURL, stamp: stamp, fingerprints: fingerprints)
    }

    /// The index's form of `filter`.
    private static func filter(_ filter: SearchFilter) -> Index.Filter {
        Index.Filter(channels: filter.channelURLs, senders: filter.senderIDs, from: filter.createdSince, until: filter.createdBefore)
    }

    /// Drops the documents upserts and removals left dead once they are a quarter of the index.
    private func compactIfWorthIt() {
        if index.deadCount > 4096, index.deadCount * 4 > index.documents.count { index.compact() }
    }

    // MARK: - Hits

    /// `found` as the messages a load returns now, with their highlights: a hit whose message is
    /// gone, or no longer meets the query (changed since it was indexed), is left out.
    private func hits(_ found: [Index.Hit], query: SearchQuery) throws(FlatCacheError) -> [SearchHit<Message>] {
        var channels = [String: [Message.MessageID: Message]]()
        var hits = [SearchHit<Message>]()
        for hit in found {
            let document = index.documents[Int(hit.document)]
            let channelURL = index.channels[Int(document.channel)]
            if channels[channelURL] == nil {
                let file = try store.layout.messagesFile(forChannel: channelURL)
                let stamp = try store.engine.folders.dataStamp(of: file)
                let records: [Message] = store.policy.isExpired(file)
                    ? [] : store.newest(try store.engine.recordsLeavingMemory(file, rule: store.appendRule, stamp: stamp) ?? [])
                channels[channelURL] = Dictionary(records.map { ($0.messageID, $0) }, uniquingKeysWith: { $1 })
            }
            guard let message = channels[channelURL]?[document.key], let text = message.searchableText,
                let highlights = query.match(in: text)
            else { continue }
            hits.append(SearchHit(message: message, channelURL: channelURL, text: text, highlights: highlights, score: hit.score))
        }
        return hits
    }
}
