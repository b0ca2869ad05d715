import Foundation

/// One cache's search index in memory, kept current with its messages: what
/// ``MessageSearch`` asks.
///
/// - The first use builds it in the background, one channel at a time;
///   searches meanwhile answer from what is indexed so far.
/// - This process's changes reach it through the folder's ``ChangeHub``
///   (a ``ChangeLedger`` of the files that changed), and are indexed before
///   the next search answers: memory's changes waiting for write-behind
///   included (those made before search started are read again over a saved index).
/// - Other processes' writes show as message files with other stamps than
///   those indexed (one `stat` a channel, at a search when a second has
///   passed since the last look: ``sweepInterval``).
/// - Every hit is checked against the message as a load returns it now, so
///   a message deleted or edited since it was indexed is never shown for words it no longer has.
///
/// Concurrency: all its state is confined to `queue`, a serial queue of its
/// own (not Swift's cooperative pool: indexing reads files). The build is
/// many small items on it, so that searches run between them.
final class SearchService<Message: MessageRecord>: @unchecked Sendable {
    typealias Index = SearchIndex<Message.MessageID>

    typealias Snapshot = SearchSnapshot<Message.MessageID>

    let store: MessageStore<Message>
    let ledger = ChangeLedger()
    let queue = DispatchQueue(label: "FlatCache.Search", qos: .utility)
    /// Where snapshots are written, away from searches.
    let snapshotQueue = DispatchQueue(label: "FlatCache.SearchSnapshot", qos: .background)
    /// The snapshot saves, on ``snapshotQueue``: one asked while another waits takes its place.
    let snapshotSaves: LatestWork

    // Confined to `queue`.
    var index = Index()
    /// What was indexed of each message file, by path.
    var indexed = [String: Snapshot.File]()
    /// Message files the background build has still to index, in its order, and as a set.
    var backlog = [RecordFile]()
    var waiting = Set<String>()
    var started = false
    /// Calls of ``whenComplete(_:)`` waiting for the backlog to empty.
    var completionWaiters = [@Sendable (Result<SearchProgress, FlatCacheError>) -> Void]()
    /// Message files whose index changed since the last snapshot was saved (or read), each
    /// counted once however often it changed: what the next launch would read again.
    var changedSinceSnapshot = Set<String>()
    /// Whether a message file left the index since then.
    var removedSinceSnapshot = false
    /// When ``catchUp()`` last looked for other writers' changes.
    var lastSweep: ContinuousClock.Instant?
    /// How many times a message file was read into the index: what a saved index spares.
    var filesRead = 0
    /// Whether a build item waits on `queue`.
    var isBuildScheduled = false
    /// Whether a build is under way: files wait in the backlog, and its end saves the index.
    var isBuilding = false
    /// What ``folderIsOurs()`` found, and the `records` file's stamp then.
    var folderCheck: (stamp: FileStamp?, ours: Bool)?
    /// By path, the messages the writes indexed from their lines (``indexAppended(_:to:)``) said,
    /// and the file's stamp after them, for files whose every record a load shows: while the
    /// file is still at that stamp, a hit among them is read from here, not by loading the channel.
    var linesSaid = [String: (stamp: FileStamp, messages: [Message.MessageID: Message])]()

    /// The most messages ``linesSaid`` keeps, over every file: past it, it starts again.
    static var linesSaidLimit: Int { 4_096 }

    /// A few dozen channels a build item indexes before it lets searches run.
    static var channelsPerItem: Int { 16 }
    /// More channels than this changed by other writers at once are indexed in the background.
    static var catchUpLimit: Int { 64 }
    /// How often a search looks for other writers' changes (listing the messages folder and a
    /// `stat` a file: most of a search's time on a thousand channels, when done at every search).
    static var sweepInterval: Duration { .seconds(1) }

    init(store: MessageStore<Message>) {
        self.store = store.using(.memoryAndDisk)
        snapshotSaves = LatestWork(on: snapshotQueue)
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
                limit: request.limit == .max ? .max : request.limit + 1, after: cursor, isCancelled: isCancelled)
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

    /// How many message files were read into the index so far (for tests).
    var filesReadSoFar: Int { queue.sync { filesRead } }

    /// How far the index is: on `queue`.
    var progress: SearchProgress {
        dispatchPrecondition(condition: .onQueue(queue))
        // Counted over the files waiting, often none: not over every file indexed, at every search.
        let waitingIndexed = waiting.reduce(0) { $0 + (indexed[$1] == nil ? 0 : 1) }
        return SearchProgress(
            indexedChannels: indexed.count - waitingIndexed,
            channelCount: indexed.count + waiting.count - waitingIndexed,
            indexedMessages: index.liveCount, isComplete: started && waiting.isEmpty)
    }

    /// Starts the build when it has not started: on `queue`.
    func startIfNeeded() throws(FlatCacheError) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !started, folderIsOurs() else { return }
        // Listening first: a file written while the folder is listed is then indexed twice, never missed.
        store.engine.hub.listenToAll(ledger)
        restoreSnapshot()
        // Changes made before this start wait in memory, their files' stamps unchanged: read those files again.
        for path in store.engine.heldPaths() where indexed[path] != nil {
            if store.engine.hasUnwrittenChanges(store.layout.messagesFile(named: String(path.split(separator: "/").last ?? ""))) {
                indexed[path]?.stamp = nil
            }
        }
        // Files the saved index knows are caught up by their stamps, like any file (see `catchUp`).
        enqueue(try messageFiles().filter { indexed[$0.path] == nil })
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

    /// The index's form of `filter`.
    private static func filter(_ filter: SearchFilter) -> Index.Filter {
        Index.Filter(channels: filter.channelURLs, senders: filter.senderIDs, from: filter.createdSince, until: filter.createdBefore)
    }

    // MARK: - Hits

    /// `found` as the messages a load returns now, with their highlights: a hit whose message is
    /// gone, or no longer meets the query (changed since it was indexed), is left out.
    private func hits(_ found: [Index.Hit], query: SearchQuery) throws(FlatCacheError) -> [SearchHit<Message>] {
        // Each channel read once, and only the hits' records copied out of it.
        var wanted = [String: [Message.MessageID: [Int]]]()
        for (number, hit) in found.enumerated() {
            let document = index.documents[Int(hit.document)]
            wanted[index.channels[Int(document.channel)], default: [:]][document.key, default: []].append(number)
        }
        var messages = [Message?](repeating: nil, count: found.count)
        for (channelURL, keys) in wanted {
            let file = try store.layout.messagesFile(forChannel: channelURL)
            guard !store.policy.isExpired(file) else { continue }
            // Hits among the messages a write's lines said, the file as they left it: those messages.
            if let said = linesSaid[file.path], keys.keys.allSatisfy({ said.messages[$0] != nil }),
                !store.engine.hasUnwrittenChanges(file), try store.engine.folders.dataStamp(of: file) == said.stamp
            {
                for (key, numbers) in keys { for number in numbers { messages[number] = said.messages[key] } }
                continue
            }
            // As a load reads them, and kept in memory like a load's: the next keystroke's
            // search, or opening the hit, finds them there.
            guard let records = try store.engine.records(file, rule: store.appendRule) else { continue }
            // The ids read in place (in generic code a subscript copies each record): only hits are copied.
            let ids = MessageStore<Message>.messageIDs(of: records)
            for position in ids.indices.suffix(store.maxPerChannel) {
                guard let numbers = keys[ids[position]] else { continue }
                for number in numbers { messages[number] = records[position] }
            }
        }
        var hits = [SearchHit<Message>]()
        for (number, hit) in found.enumerated() {
            guard let message = messages[number], let text = message.searchableText, let highlights = query.match(in: text)
            else { continue }
            let channelURL = index.channels[Int(index.documents[Int(hit.document)].channel)]
            hits.append(SearchHit(message: message, channelURL: channelURL, text: text, highlights: highlights, score: hit.score))
        }
        return hits
    }
}
