public import Foundation

/// The messages the user wrote that have not reached the server yet: queued
/// durably, shown at once, and delivered once by an ``OutboxDelivery``.
///
/// Each entry carries a request id, the idempotency key its message is sent
/// under: a send whose answer was lost is sent again under the same key, and
/// the server answers it with the message it made the first time. When the
/// server's copy comes back by any path (the send's answer, a live event, a
/// page), ``confirm(_:)`` matches it to its entry by ``MessageRecord/requestID``.
///
/// ```swift
/// try await cache.outbox.send(
///     ChatMessage(messageID: 0, channelURL: channelURL, createdAt: 1_700_000_000_000, text: "On my way"))
/// let delivery = OutboxDelivery(outbox: cache.outbox, sender: server, store: cache.messages)
/// await delivery.start()   // sends each channel's entries in order, now and whenever one is queued
/// ```
///
/// The entries live in the cache folder's `outbox.lines` (see `docs/format.md`),
/// one line per change of an entry, appended and flushed to the disk
/// (`fsync`) before each call returns, whatever ``Configuration/durability``
/// says: the outbox holds the only copy of what the user typed. A crash or a
/// kill at any instant leaves every entry a call returned for. Several
/// processes may share it; each call reads what the others wrote.
public final class Outbox<Message: MessageRecord>: Sendable {
    private let storage: RecordStorage
    private let file: RecordFile
    private let clock: CacheClock
    /// Every call's disk work, one at a time, away from the cooperative pool.
    private let queue = DispatchQueue(label: "FlatCache.Outbox")
    /// What the file holds; touched only on `queue`.
    private let folded = Folded()
    private let listeners = Broadcast<OutboxEvent<Message>>()

    init(storage: RecordStorage, file: RecordFile, clock: CacheClock) {
        self.storage = storage
        self.file = file
        self.clock = clock
    }

    // MARK: - What an app calls

    /// Queues `message` to be sent under `requestID`, and returns once the
    /// entry is on disk (flushed): from then on no crash loses it.
    ///
    /// Queuing a request id the outbox already has returns that entry as it
    /// is, so an app may queue again after a crash without making a second one.
    ///
    /// - Parameters:
    ///   - message: What the user wrote; its id is not looked at (the server gives one).
    ///   - requestID: The idempotency key; a new UUID by default. Pass your
    ///     own to send it to your server under a key you keep.
    /// - Returns: The entry, ``OutboxEntry/State/pending``.
    /// - Throws: ``FlatCacheError/emptyChannelURL``, ``FlatCacheError/emptyRequestID``,
    ///   ``FlatCacheError/readOnlyCache(_:)``,
    ///   ``FlatCacheError/serializationFailed(recordType:underlying:)``, or a
    ///   file-system error (nothing was queued then).
    @discardableResult
    public func send(_ message: Message, requestID: String = UUID().uuidString) async throws(FlatCacheError) -> OutboxEntry<Message> {
        guard !message.channelURL.isEmpty else { throw .emptyChannelURL }
        guard !requestID.isEmpty else { throw .emptyRequestID }
        let queuedAt = clock.milliseconds
        let entry = try await change { folded throws(FlatCacheError) -> Decision in
            if let existing = folded.entry(requestID) { return (existing, nil) }
            let entry = OutboxEntry(
                requestID: requestID, message: message, queuedAt: queuedAt, state: .pending, attempts: 0, lastFailure: nil)
            return (entry, (OutboxRecord(entry), .queued(entry)))
        }
        guard let entry else { throw .outboxEntryNotFound(requestID: requestID) }  // unreachable: send always decides one
        return entry
    }

    /// The entries still in the outbox (pending, sending or failed), in the order queued.
    ///
    /// - Throws: A file-system error.
    public func entries() async throws(FlatCacheError) -> [OutboxEntry<Message>] {
        try await run { [self] () throws(FlatCacheError) in
            try storage.withLock(file) { () throws(FlatCacheError) in try refreshLocked() }
            return folded.waiting
        }
    }

    /// The entries of one channel still in the outbox, in the order queued.
    ///
    /// - Throws: ``FlatCacheError/emptyChannelURL`` or a file-system error.
    public func entries(in channelURL: String) async throws(FlatCacheError) -> [OutboxEntry<Message>] {
        guard !channelURL.isEmpty else { throw .emptyChannelURL }
        return try await entries().filter { $0.channelURL == channelURL }
    }

    /// Makes a failed entry pending again, to be sent in its turn (after the
    /// entries of its channel queued before it), optionally with its message
    /// edited first; a pending entry is tried at once. An entry being sent is left as it is.
    ///
    /// - Parameters:
    ///   - requestID: The entry's request id.
    ///   - edited: The message to send instead, in the same channel; `nil` keeps it.
    /// - Throws: ``FlatCacheError/outboxEntryNotFound(requestID:)``,
    ///   ``FlatCacheError/outboxEntrySending(requestID:)`` when `edited` is given
    ///   for an entry being sent, ``FlatCacheError/misplacedMessage(messageID:channelURL:expectedChannelURL:)``
    ///   for an edit in another channel, or a file-system error.
    public func retry(_ requestID: String, with edited: Message? = nil) async throws(FlatCacheError) {
        _ = try await change { folded throws(FlatCacheError) -> Decision in
            guard var entry = folded.entry(requestID) else { throw .outboxEntryNotFound(requestID: requestID) }
            if case .sending = entry.state {
                if edited != nil { throw .outboxEntrySending(requestID: requestID) }
                return (entry, nil)
            }
            if let edited {
                guard edited.channelURL == entry.channelURL else {
                    throw .misplacedMessage(
                        messageID: requestID, channelURL: edited.channelURL, expectedChannelURL: entry.channelURL)
                }
                entry.message = edited
            }
            entry.state = .pending
            entry.lastFailure = nil
            return (entry, (OutboxRecord(entry), .changed(entry)))
        }
    }

    /// Takes a pending or failed entry out of the outbox: it will not be sent.
    ///
    /// - Throws: ``FlatCacheError/outboxEntryNotFound(requestID:)``,
    ///   ``FlatCacheError/outboxEntrySending(requestID:)`` (the server may
    ///   already have it: wait for its send to end), or a file-system error.
    public func cancel(_ requestID: String) async throws(FlatCacheError) {
        _ = try await change { folded throws(FlatCacheError) -> Decision in
            guard let entry = folded.entry(requestID) else { throw .outboxEntryNotFound(requestID: requestID) }
            if case .sending = entry.state { throw .outboxEntrySending(requestID: requestID) }
            return (entry, (OutboxRecord(entry, kind: .cancelled), .cancelled(entry)))
        }
    }

    /// Marks the entry `serverMessage` came from as sent, matched by its
    /// ``MessageRecord/requestID``: what a collection does with a live event
    /// or a page that brings the server's copy of a message still in the
    /// outbox, so that it is neither shown twice nor sent again.
    ///
    /// - Returns: The entry confirmed; `nil` when no entry waits under that
    ///   request id (already confirmed, cancelled, or another client's message).
    /// - Throws: A file-system error.
    @discardableResult
    public func confirm(_ serverMessage: Message) async throws(FlatCacheError) -> OutboxEntry<Message>? {
        guard let requestID = serverMessage.requestID, !requestID.isEmpty else { return nil }
        return try await confirm(requestID, with: serverMessage)
    }

    /// A stream of every change made through this outbox from now on, each
    /// once, in order: any number of listeners may iterate streams of their
    /// own. It ends when the listener stops iterating it. (Another
    /// ``ChatCache`` on the folder, or another process, has its own events;
    /// ``entries()`` reads what they wrote.)
    public func events() -> AsyncStream<OutboxEvent<Message>> {
        listeners.subscribe()
    }

    // MARK: - What the delivery calls

    /// Marks the entry sending (one more attempt) and returns it; `nil`
    /// when it is no longer waiting to be sent (sent, cancelled, failed).
    func beginSending(_ requestID: String) async throws(FlatCacheError) -> OutboxEntry<Message>? {
        try await change { folded throws(FlatCacheError) -> Decision in
            guard var entry = folded.entry(requestID), !entry.isFailed else { return (nil, nil) }
            entry.state = .sending
            entry.attempts += 1
            return (entry, (OutboxRecord(entry), .changed(entry)))
        }
    }

    /// Records a failed send: pending again with `failure` noted, or failed
    /// for good when `forGood`.
    func sendFailed(_ requestID: String, failure: String, forGood: Bool) async throws(FlatCacheError) {
        _ = try await change { folded throws(FlatCacheError) -> Decision in
            guard var entry = folded.entry(requestID), case .sending = entry.state else { return (nil, nil) }
            entry.state = forGood ? .failed(reason: failure, attempts: entry.attempts) : .pending
            entry.lastFailure = forGood ? nil : failure
            return (entry, (OutboxRecord(entry), .changed(entry)))
        }
    }

    /// Marks the entry `requestID` sent, as the server's copy `serverMessage`.
    func confirm(_ requestID: String, with serverMessage: Message) async throws(FlatCacheError) -> OutboxEntry<Message>? {
        try await change { folded throws(FlatCacheError) -> Decision in
            guard var entry = folded.entry(requestID) else { return (nil, nil) }
            entry.state = .sent(serverID: serverMessage.messageID)
            entry.lastFailure = nil
            return (entry, (OutboxRecord(entry, serverMessage: serverMessage), .confirmed(entry, serverMessage)))
        }
    }

    // MARK: - What a migration calls

    /// The waiting entries, read on the caller's thread (for a blocking call such as a migration).
    func waitingEntriesBlocking() throws(FlatCacheError) -> [OutboxEntry<Message>] {
        try queue.sync { () -> Result<[OutboxEntry<Message>], FlatCacheError> in
            Result { () throws(FlatCacheError) in
                try storage.withLock(file) { () throws(FlatCacheError) in try refreshLocked() }
                return folded.waiting
            }
        }.get()
    }

    /// The lines `entries` would be written as: checked before a migration removes anything.
    static func lines(of entries: [OutboxEntry<Message>], in storage: RecordStorage) throws(FlatCacheError) -> [Data] {
        try storage.serialize(entries.map { OutboxRecord($0) })
    }

    /// Makes `entries` the whole outbox (flushed), on the caller's thread: a migration carrying them over.
    func restoreBlocking(_ entries: [OutboxEntry<Message>]) throws(FlatCacheError) {
        guard !entries.isEmpty else { return }
        try storage.requireWritable()
        try queue.sync { () -> Result<Void, FlatCacheError> in
            Result { () throws(FlatCacheError) in
                try storage.withLock(file) { () throws(FlatCacheError) in
                    let records = entries.map { OutboxRecord($0) }
                    _ = try file.write(try storage.serialize(records), synchronized: true)
                    folded.reset(records, tail: nil)
                }
            }
        }.get()
    }

    // MARK: - The file

    /// What a change decided: the entry to return, and the line to write with the event it makes, if any.
    private typealias Decision = (entry: OutboxEntry<Message>?, written: (OutboxRecord<Message>, OutboxEvent<Message>)?)

    /// Runs `decide` over what the file holds now and writes the line it
    /// returns (appended, flushed; the file compacted when mostly superseded),
    /// then tells the listeners; all under the file's lock.
    private func change(
        _ decide: @escaping @Sendable (Folded) throws(FlatCacheError) -> Decision
    ) async throws(FlatCacheError) -> OutboxEntry<Message>? {
        try storage.requireWritable()
        return try await run { [self] () throws(FlatCacheError) in
            let (result, event) = try storage.withLock(file) { () throws(FlatCacheError) in
                try refreshLocked()
                let (result, written) = try decide(folded)
                guard let (line, event) = written else { return (result, nil as OutboxEvent<Message>?) }
                try writeLocked(line)
                return (result, event)
            }
            if let event { listeners.yield(event) }
            return result
        }
    }

    private func run<T: Sendable>(_ work: @escaping @Sendable () throws(FlatCacheError) -> T) async throws(FlatCacheError) -> T {
        try await BlockingWork.run(on: queue, work)
    }

    /// Reads the file again when another process (or a damaged file) changed it since.
    private func refreshLocked() throws(FlatCacheError) {
        let stamp = try FileSystem.stamp(at: file.path)
        if let tail = folded.tail, stamp == tail.stamp, try FileSystem.stamp(at: file.sidecarPath) == tail.sidecarStamp {
            return
        }
        if stamp == nil, folded.tail == nil, folded.isEmpty { return }
        let (records, tail, _) = try storage.loadLocked(file, as: OutboxRecord<Message>.self)
        folded.reset(records ?? [], tail: tail)
    }

    /// Writes `line`: appended and flushed, or the whole file rewritten
    /// (flushed) when it is missing or mostly superseded lines, or removed
    /// when no entry is left.
    private func writeLocked(_ line: OutboxRecord<Message>) throws(FlatCacheError) {
        folded.apply(line)
        if folded.isEmpty {
            try file.remove()  // the lock is held: not storage.remove, which takes it
            try FileSystem.synchronizeDirectory(at: FileSystem.parent(of: file.path))
            folded.reset([], tail: nil)
            return
        }
        let bytes = try storage.serialize([line])
        if let tail = folded.tail, !folded.wantsCompaction,
            var staged = try file.stageAppend(bytes, after: tail)
        {
            try file.synchronize(staged)
            try file.commit(&staged)
            try FileSystem.synchronizeFile(at: file.sidecarPath)
            folded.appended(tail: staged.tail)
            return
        }
        // Missing, changed under us, or mostly superseded: write the live lines whole.
        let live = folded.liveLines
        var staged = try storage.stageReplace(file, try storage.serialize(live))
        do {
            try file.synchronize(staged)
        } catch {
            file.discard(staged)
            throw error
        }
        try file.commit(&staged)
        try FileSystem.synchronizeDirectory(at: FileSystem.parent(of: file.path))
        folded.reset(live, tail: staged.tail)
    }

    /// The file's lines folded into entries; used only on the outbox's queue.
    private final class Folded: @unchecked Sendable {
        /// The last line of each request id in the file.
        private var last = [String: OutboxRecord<Message>]()
        /// Request ids in the order of their first line.
        private var order = [String]()
        /// Lines in the file.
        private var lineCount = 0
        /// Entries still waiting (kept as lines come, not counted per write: a write must not cost a pass over the queue).
        private var liveCount = 0
        /// The file as last read or written; `nil` when missing.
        private(set) var tail: RecordFile.Tail?

        func reset(_ records: [OutboxRecord<Message>], tail: RecordFile.Tail?) {
            last.removeAll()
            order.removeAll()
            lineCount = 0
            liveCount = 0
            self.tail = tail
            for record in records { apply(record) }
        }

        func apply(_ record: OutboxRecord<Message>) {
            let previous = last.updateValue(record, forKey: record.requestID)
            if previous == nil {
                order.append(record.requestID)
            } else if previous?.isLive != true, record.isLive {
                // Queued again after it left (sent or cancelled): it joins the end of the queue.
                order.removeAll { $0 == record.requestID }
                order.append(record.requestID)
            }
            liveCount += (record.isLive ? 1 : 0) - (previous?.isLive == true ? 1 : 0)
            lineCount += 1
        }

        func appended(tail: RecordFile.Tail) { self.tail = tail }

        /// The waiting entry `requestID`.
        func entry(_ requestID: String) -> OutboxEntry<Message>? {
            guard let record = last[requestID], let entry = record.entry, entry.isWaiting else { return nil }
            return entry
        }

        /// The waiting entries, in the order queued.
        var waiting: [OutboxEntry<Message>] { order.compactMap(entry) }

        /// No entry waits.
        var isEmpty: Bool { liveCount == 0 }

        /// The last line of each waiting entry, in the order queued: the file, compacted.
        var liveLines: [OutboxRecord<Message>] { order.compactMap { last[$0].flatMap { $0.isLive ? $0 : nil } } }

        /// Whether the file is mostly lines an entry's later line superseded.
        var wantsCompaction: Bool { lineCount >= 64 && lineCount > 4 * liveCount }
    }
}
