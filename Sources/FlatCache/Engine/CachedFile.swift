import Foundation

/// One file's records as the engine knows them: what is on disk (with its
/// tail, to notice other writers and to append), and changes not yet written.
///
/// New records after the last (a new message) take a fast path that costs
/// the size of the change, not of the channel: they are appended to the
/// records in memory in place, checked against the ids kept beside them,
/// and once their lines are appended to the file, the records on disk are
/// simply a longer prefix of those in memory (``Disk/viewPrefix(count:tail:)``),
/// never a copy.
final class CachedFile<R: CacheRecord>: EngineFile, @unchecked Sendable {
    let file: RecordFile
    let rule: AppendRule<R>?

    // Guarded by the engine's lock; `installing` and `appending` by the file's lock too
    // (a write stages, commits and finishes holding it). Internal rather than private only so
    // that the extensions in CachedFile+*.swift reach them; nothing outside this type does.
    /// What is on disk, when known.
    var disk: Disk = .unknown
    /// The ids of the records on disk, once an append needed them.
    var diskIDs: Set<Int64>?
    var pending = [Change<R>]() { didSet { isDirty = !pending.isEmpty || !writing.isEmpty } }
    var writing = [Change<R>]() { didSet { isDirty = !pending.isEmpty || !writing.isEmpty } }
    /// Changes saved to memory only (``CacheTier/memory``): applied after
    /// the others in every view, never written; gone with the records and
    /// at the next change that is written.
    var memoryOnly = [Change<R>]() { didSet { hasMemoryOnlyChanges = !memoryOnly.isEmpty } }
    /// `disk` with `writing` and `pending` applied; `.none` until computed.
    var view: [R]?? = .none
    /// The ids of `view`'s records, once an append needed them.
    var viewIDs: Set<Int64>?
    /// Whether `view` is the records on disk followed by those `writing` and
    /// `pending` added, each change appended in order (none applied otherwise).
    var viewExtendsDisk = false
    private(set) var cost = 0
    /// The records the changes not yet written hold (``recordsHeld(by:)``), as of the last ``updateCost()``.
    private var unwrittenRecords = 0
    var lastUse: UInt64 = 0
    var readInPart: UInt64?
    /// Estimated memory per record, from the bytes last read or written.
    private var recordCost = 512
    var installing: (records: [R]?, dropped: Int) = (nil, 0)
    /// Whether `installing` holds the file's records as read back, though its
    /// lines are more than its records (appended edits, format 2).
    var installingIsFile = false
    /// For a write that appends one change's edits: the change in place, which
    /// the records on disk take once it lands (``Change/applyInPlace``), the
    /// stamp of the file its lines were appended to, and its records when the
    /// write read them (`nil`: memory's, when it still knows that file).
    var installingInPlace: (apply: @Sendable (inout [R]) -> Void, after: FileStamp, read: [R]?)?
    /// For a write that appends edits to a file whose records memory does
    /// not hold: at most how many records the file holds after it, and the
    /// last record before it (see ``Disk/summary(count:last:tail:)``).
    var appendingBlind: (count: Int, last: R?)?
    /// For a write that appends: how many records were on disk before it,
    /// those it added, and the records before it when the write had to read
    /// them (what memory knew was out of date).
    var appending: (onDiskCount: Int, added: [R], read: [R]?)?

    enum Disk {
        case unknown
        /// The file's records (`nil`: no file) and tail.
        case known(records: [R]?, tail: RecordFile.Tail?)
        /// The file holds the first `count` records of the view, which has
        /// only grown by appends since (so they are kept once, not copied).
        case viewPrefix(count: Int, tail: RecordFile.Tail)
        /// What is left once the records are evicted: enough to append to
        /// the file without reading it (`count` records ending with `last`,
        /// their ids in `diskIDs`), a small fraction of the records' memory.
        /// Once the file has appended lines (format 2, `tail.appendedLines`
        /// above 0), `count` is only at most how many records it holds, and
        /// `last` the last before them: new records then take appended lines.
        case summary(count: Int, last: R?, tail: RecordFile.Tail)
    }

    init(file: RecordFile, rule: AppendRule<R>?) {
        self.file = file
        self.rule = rule
    }

    // Kept as the lists change, not worked out when asked: every flush asks each file memory
    // holds, and in this generic class `isEmpty` looks up the list's type each time (a flush with
    // a thousand channels in memory spent a third of a one-message save on it).
    private(set) var isDirty = false

    private(set) var hasMemoryOnlyChanges = false

    /// Every change not on disk, in order: those being written, those waiting, the memory-only ones.
    var unwritten: [Change<R>] { writing + pending + memoryOnly }

    /// Whether the view is what is on disk followed by appends only.
    var noChangesOverDisk: Bool { writing.isEmpty && pending.isEmpty && memoryOnly.isEmpty }

    /// Installs what a read found on disk; returns the records with changes applied. Engine lock held.
    @_specialize(where R == ChatMessage)
    func install(read records: [R]?, tail: RecordFile.Tail?, bytes: Int) -> [R]? {
        if let records, !records.isEmpty { recordCost = bytes / records.count + 64 }
        setDisk(records == nil || tail != nil ? .known(records: records, tail: tail) : .unknown)
        var ignored = 0
        let computed = Self.applying(unwritten, to: records, tail: tail, dropped: &ignored)
        setView(tail == nil && records != nil ? .none : .some(computed), extendsDisk: noChangesOverDisk)
        updateCost()
        return computed
    }

    /// Forgets the records; for a file new records are appended to, keeps
    /// its summary (how many, the last, their ids) so that the next append
    /// needs no read. "No file" costs nothing to remember and stays.
    func evict() {
        switch disk {
        case .known(let records?, let tail?) where rule != nil:
            let ids = diskIDs ?? rule!.ids(records, records.count)
            (disk, diskIDs) = (.summary(count: records.count, last: records.last, tail: tail), ids)
        case .viewPrefix(let count, let tail):
            guard let rule, case .some(let records?) = view else { preconditionFailure("a prefix of no view") }
            let ids = diskIDs ?? rule.ids(records, count)
            (disk, diskIDs) = (.summary(count: count, last: count > 0 ? records[count - 1] : nil, tail: tail), ids)
        case .known(_?, _):
            setDisk(.unknown)
        case .unknown, .known(nil, _), .summary:
            break
        }
        setView(.none, extendsDisk: false)
        memoryOnly = []
        readInPart = nil
        updateCost()
    }

    /// Forgets even the summary (see ``evict()``). Engine lock held.
    func forget() {
        evict()
        if case .summary = disk { setDisk(.unknown) }
    }

    /// Whether it keeps no records, only what ``evict()`` leaves.
    var isEvicted: Bool {
        switch disk {
        case .unknown, .summary, .known(nil, _): if case .none = view { return true }
        default: break
        }
        return false
    }

    /// The records on disk and their tail (copied out of the view for a
    /// prefix of it); `nil` when unknown. Engine lock held.
    var diskRecords: (records: [R]?, tail: RecordFile.Tail?)? {
        switch disk {
        case .unknown, .summary:
            return nil
        case .known(let records, let tail):
            return (records, tail)
        case .viewPrefix(let count, let tail):
            guard case .some(let records?) = view else { preconditionFailure("a prefix of no view") }
            return (Array(records[..<count]), tail)
        }
    }

    /// Gives the records on disk a copy of their own, when they are a prefix
    /// of the view and it is about to change otherwise than by an append.
    private func detachDisk() {
        guard case .viewPrefix = disk, let (records, tail) = diskRecords else { return }
        disk = .known(records: records, tail: tail)
    }

    func setDisk(_ new: Disk) {
        disk = new
        diskIDs = nil
    }

    func setView(_ new: [R]??, extendsDisk: Bool) {
        detachDisk()
        (view, viewIDs, viewExtendsDisk) = (new, nil, extendsDisk)
    }

    func updateCost() {
        updateCost(unwrittenRecords: Self.recordsHeld(by: writing) + Self.recordsHeld(by: pending) + Self.recordsHeld(by: memoryOnly))
    }

    /// ``updateCost()`` after `change` was appended to `pending`, the lists of
    /// changes otherwise as they were at the last one: without going over every
    /// change again, which made a burst of saves to one file quadratic (issue 32).
    func updateCost(afterAdding change: Change<R>) {
        let held = unwrittenRecords + Self.recordsHeld(by: CollectionOfOne(change))
        assert(held == Self.recordsHeld(by: writing) + Self.recordsHeld(by: pending) + Self.recordsHeld(by: memoryOnly))
        updateCost(unwrittenRecords: held)
    }

    private func updateCost(unwrittenRecords held: Int) {
        unwrittenRecords = held
        // The view shares the disk records' storage until a change copies it: count the larger.
        var count = 0
        if case .known(let records?, _) = disk { count = records.count }
        if case .some(let records?) = view { count = max(count, records.count) }
        // A change holds its records until written.
        count += held
        let ids = (viewIDs?.count ?? 0) + (diskIDs?.count ?? 0)
        cost = count * recordCost + 256 + ids * 16
    }

    /// How many records `changes` hold until written: an append's own, one for any other change.
    private static func recordsHeld(by changes: some Collection<Change<R>>) -> Int {
        var count = 0
        for change in changes { count += change.appended?.records.count ?? 1 }
        return count
    }
}
