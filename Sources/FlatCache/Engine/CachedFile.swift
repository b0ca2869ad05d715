import Foundation

/// What the engine does with one file, whatever its record type.
protocol EngineFile: AnyObject, Sendable {
    /// The file.
    var file: RecordFile { get }
    /// Whether changes wait to be written, or are being written. Engine lock held.
    var isDirty: Bool { get }
    /// The estimated bytes its records take in memory. Engine lock held.
    var cost: Int { get }
    /// When the app last used it, on the engine's clock. Engine lock held.
    var lastUse: UInt64 { get set }
    /// Forgets its records (keeps changes not yet written, and what an
    /// append needs to know of the file). Engine lock held.
    func evict()
    /// Forgets its records and everything else but changes not yet written. Engine lock held.
    func forget()
    /// Whether it holds no records in memory (see ``evict()``). Engine lock held.
    var isEvicted: Bool { get }
    /// Whether it holds memory-only changes (``CacheTier/memory``). Engine lock held.
    var hasMemoryOnlyChanges: Bool { get }
    /// When (on the engine's clock) a part of the file was last read, since its records left memory. Engine lock held.
    var readInPart: UInt64? { get set }
    /// Takes the changes waiting and stages their write. File lock held.
    func stage(in engine: CacheEngine) throws(FlatCacheError) -> StagedStep
    /// The records retention dropped in the write just staged.
    var droppedInWrite: Int { get }
    /// Records what the write left on disk (`tail`: `nil` when the file is gone). Engine lock held.
    func finish(tail: RecordFile.Tail?)
    /// How many records the file holds with every change not yet written
    /// applied (`nil`: no file), as a load would return them; reads the file,
    /// holding its lock, when memory does not know it, and keeps nothing of
    /// that read. Blocks; call without the engine's lock.
    func recordCount(in engine: CacheEngine) throws(FlatCacheError) -> Int?
    /// After a failed write: keeps the changes for the next write, or drops
    /// them and forgets what is on disk. `staged`: whether the write took
    /// the changes waiting (else it failed before, and all of them were its). Engine lock held.
    func abandon(keepingChanges: Bool, staged: Bool)
}

/// What a flush does to one file.
enum StagedStep: Sendable {
    /// No change was waiting (another write took them).
    case noChanges
    /// The changes leave no file, and there is none.
    case nothing
    /// The changes leave no file: remove it.
    case remove
    /// Write (or append) as staged.
    case write(RecordFile.StagedWrite)
}

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
    // (a write stages, commits and finishes holding it).
    /// What is on disk, when known.
    private(set) var disk: Disk = .unknown
    /// The ids of the records on disk, once an append needed them.
    private var diskIDs: Set<Int64>?
    private(set) var pending = [Change<R>]()
    private var writing = [Change<R>]()
    /// Changes saved to memory only (``CacheTier/memory``): applied after
    /// the others in every view, never written; gone with the records and
    /// at the next change that is written.
    private var memoryOnly = [Change<R>]()
    /// `disk` with `writing` and `pending` applied; `.none` until computed.
    private var view: [R]?? = .none
    /// The ids of `view`'s records, once an append needed them.
    private var viewIDs: Set<Int64>?
    /// Whether `view` is the records on disk followed by those `writing` and
    /// `pending` added, each change appended in order (none applied otherwise).
    private var viewExtendsDisk = false
    private(set) var cost = 0
    var lastUse: UInt64 = 0
    var readInPart: UInt64?
    /// Estimated memory per record, from the bytes last read or written.
    private var recordCost = 512
    private var installing: (records: [R]?, dropped: Int) = (nil, 0)
    /// For a write that appends: how many records were on disk before it,
    /// those it added, and the records before it when the write had to read
    /// them (what memory knew was out of date).
    private var appending: (onDiskCount: Int, added: [R], read: [R]?)?

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
        case summary(count: Int, last: R?, tail: RecordFile.Tail)
    }

    init(file: RecordFile, rule: AppendRule<R>?) {
        self.file = file
        self.rule = rule
    }

    var isDirty: Bool { !pending.isEmpty || !writing.isEmpty }

    var hasMemoryOnlyChanges: Bool { !memoryOnly.isEmpty }

    /// Every change not on disk, in order: those being written, those waiting, the memory-only ones.
    private var unwritten: [Change<R>] { writing + pending + memoryOnly }

    /// Whether the view is what is on disk followed by appends only.
    private var noChangesOverDisk: Bool { writing.isEmpty && pending.isEmpty && memoryOnly.isEmpty }

    /// The records with every change applied, when what is on disk is known
    /// and still what is there (`stamps`, of the data file and its sidecar);
    /// `.none` otherwise. Engine lock held.
    @_specialize(where R == ChatMessage)
    func current(onDisk stamps: (data: FileStamp?, sidecar: FileStamp?)) -> [R]?? {
        switch disk {
        case .unknown, .summary:
            return .none
        case .viewPrefix(_, let tail):
            return Self.matches([], tail, stamps) ? view : .none
        case .known(let records, let tail):
            guard Self.matches(records, tail, stamps) else { return .none }
            if case .some(let computed) = view { return .some(computed) }
            var ignored = 0
            let computed = Self.applying(unwritten, to: records, tail: tail, dropped: &ignored)
            setView(.some(computed), extendsDisk: noChangesOverDisk)
            updateCost()
            return .some(computed)
        }
    }

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

    /// Adds a change; the records in memory follow it at once (a new
    /// record after the last, in place). Engine lock held.
    @_specialize(where R == ChatMessage)
    func add(_ change: Change<R>) {
        if !memoryOnly.isEmpty {
            // A change that is written ends the memory-only ones.
            memoryOnly = []
            setView(.none, extendsDisk: false)
        }
        pending.append(change)
        // Waiting changes hold their records whether or not the file was read: count them.
        guard case .some(var records) = view else { return updateCost() }
        var ids = viewIDs
        // `records` and `ids` now hold the only references (unless the disk shares them): they grow in place.
        (view, viewIDs) = (.none, nil)
        if let rule, let appended = change.appended, records != nil {
            if ids == nil { ids = Set(records!.lazy.map(rule.id)) }
            if rule.allows(records!, appended.records, ids: ids) {
                records!.append(contentsOf: appended.records)
                for record in appended.records { ids!.insert(rule.id(record)) }
                (view, viewIDs) = (.some(records), ids)
                updateCost()
                return
            }
        }
        view = .some(records)  // back, so that the disk's records can be copied out of it before it changes
        var ignored = 0
        setView(.some(change.apply(records, &ignored)), extendsDisk: false)
        updateCost()
    }

    /// Adds a change for memory only (``CacheTier/memory``): never written. Engine lock held.
    func addMemoryOnly(_ change: Change<R>) {
        memoryOnly.append(change)
        if case .some(let records) = view {
            var ignored = 0
            setView(.some(change.apply(records, &ignored)), extendsDisk: false)
        }
        updateCost()
    }

    /// Forgets the records; for a file new records are appended to, keeps
    /// its summary (how many, the last, their ids) so that the next append
    /// needs no read. "No file" costs nothing to remember and stays.
    func evict() {
        switch disk {
        case .known(let records?, let tail?) where rule != nil:
            let ids = diskIDs ?? Set(records.indices.lazy.map { self.rule!.id(records[$0]) })
            (disk, diskIDs) = (.summary(count: records.count, last: records.last, tail: tail), ids)
        case .viewPrefix(let count, let tail):
            guard let rule, case .some(let records?) = view else { preconditionFailure("a prefix of no view") }
            let ids = diskIDs ?? Set((0..<count).lazy.map { rule.id(records[$0]) })
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

    /// What a write starts from: what is on disk as known when it began.
    private enum Base {
        case unknown
        case records([R]?, tail: RecordFile.Tail?, ids: Set<Int64>?)
        /// For changes that only append: enough to check and append them.
        case end(count: Int, last: R?, ids: Set<Int64>, tail: RecordFile.Tail)
    }

    func stage(in engine: CacheEngine) throws(FlatCacheError) -> StagedStep {
        let (changes, added, known) = engine.locked { () -> ([Change<R>], (records: [R], lines: [Data])?, Base) in
            writing = pending
            pending = []
            let added = Self.appended(writing)
            if case .viewPrefix(let count, let tail) = disk, added != nil, let rule, case .some(let records?) = view {
                if diskIDs == nil { diskIDs = Set(records[..<count].lazy.map(rule.id)) }
                return (writing, added, .end(count: count, last: count > 0 ? records[count - 1] : nil, ids: diskIDs!, tail: tail))
            }
            if case .summary(let count, let last, let tail) = disk, added != nil, let ids = diskIDs {
                return (writing, added, .end(count: count, last: last, ids: ids, tail: tail))
            }
            guard let (records, tail) = diskRecords else { return (writing, added, .unknown) }
            return (writing, added, .records(records, tail: tail, ids: diskIDs))
        }
        guard !changes.isEmpty else { return .noChanges }
        let stamps = try file.stamps()
        var base = Base.unknown
        var read: [R]?
        switch known {
        case .end(_, _, _, let tail) where Self.matches([], tail, stamps): base = known
        case .records(let records, let tail, _) where Self.matches(records, tail, stamps): base = known
        default: break
        }
        // Changes from the last one that replaces everything on need not know what is on disk.
        let start = changes.lastIndex(where: \.replacesAll) ?? 0
        // What the attachment says of the old content is not true of the new: it goes first.
        if changes[start].replacesAll { try file.removeAttachment() }
        // A replace made before another writer changed the file carries what that writer did over it: it needs the file.
        let rebases = changes[start].needsFile(stamps)
        if case .unknown = base, (start == 0 && !changes[0].replacesAll) || rebases {
            let found = try engine.storage.loadLocked(file, as: R.self)
            (base, read) = (.records(found.records, tail: found.tail, ids: nil), found.records ?? [])
        }
        // New records after the last: append their lines, without applying the changes one by one.
        if let rule, let added, let staged = try stageAppend(added, to: base, rule: rule) {
            (installing, appending) = ((nil, 0), (staged.count, added.records, read))
            return .write(staged.write)
        }
        var onDisk: [R]?
        var current: (records: [R]?, tail: RecordFile.Tail?)?
        switch base {
        case .unknown: onDisk = nil
        case .records(let records, let tail, _): (onDisk, current) = (records, rebases ? (records, tail) : nil)
        case .end:
            // The same records as at the start: what memory knows of the disk only changes under the file's lock.
            if let known = engine.locked({ diskRecords }) {
                onDisk = known.records
            } else {
                onDisk = try engine.storage.loadLocked(file, as: R.self).records
            }
        }
        var dropped = 0
        let result = changes[start...].reduce(onDisk) { $1.applied(to: $0, current: current, dropped: &dropped) }
        installing = (result, dropped)
        if changes[start...].contains(where: { $0.voidsAttachment?.isSet ?? false }) { try file.removeAttachment() }
        guard let result else { return stamps.data == nil ? .nothing : .remove }
        return .write(try engine.storage.stageReplace(file, try engine.storage.serialize(result)))
    }

    /// Appends `added` to the file when `base` is known and the rule allows;
    /// with how many records the file held before.
    private func stageAppend(
        _ added: (records: [R], lines: [Data]), to base: Base, rule: AppendRule<R>
    ) throws(FlatCacheError) -> (write: RecordFile.StagedWrite, count: Int)? {
        switch base {
        case .unknown, .records(nil, _, _), .records(_, nil, _):
            return nil
        case .records(let records?, let tail?, let ids):
            guard rule.allows(records, added.records, ids: ids), let staged = try file.stageAppend(added.lines, after: tail)
            else { return nil }
            return (staged, records.count)
        case .end(let count, let last, let ids, let tail):
            guard rule.allows(count: count, last: last, added.records, ids: ids),
                let staged = try file.stageAppend(added.lines, after: tail)
            else { return nil }
            return (staged, count)
        }
    }

    /// Whether what is known of the file (`records` and their `tail`, or no
    /// file) is still what is on disk, by the files' stamps.
    private static func matches(
        _ records: [R]?, _ tail: RecordFile.Tail?, _ stamps: (data: FileStamp?, sidecar: FileStamp?)
    ) -> Bool {
        guard records != nil else { return stamps.data == nil }
        guard let tail else { return false }
        return tail.stamp == stamps.data && tail.sidecarStamp == stamps.sidecar
    }

    /// The records and lines every change adds, when each only adds.
    private static func appended(_ changes: [Change<R>]) -> (records: [R], lines: [Data])? {
        var records = [R]()
        var lines = [Data]()
        for change in changes {
            guard let added = change.appended else { return nil }
            records += added.records
            lines += added.lines
        }
        return (records, lines)
    }

    func recordCount(in engine: CacheEngine) throws(FlatCacheError) -> Int? {
        let stamps = try file.stamps()
        if case .some(let records) = engine.locked({ current(onDisk: stamps) }) { return records?.count }
        return try engine.storage.withLock(file) { () throws(FlatCacheError) -> Int? in
            let read = try engine.storage.loadLocked(file, as: R.self)
            let changes = engine.locked { unwritten }
            var ignored = 0
            return Self.applying(changes, to: read.records, tail: read.tail, dropped: &ignored)?.count
        }
    }

    /// `changes` applied in order to `records`, the file's records as read
    /// with `tail`: a replace made before another writer changed the file
    /// gets what that writer did carried over it (see ``Change/rebase``).
    @_specialize(where R == ChatMessage)
    private static func applying(_ changes: [Change<R>], to records: [R]?, tail: RecordFile.Tail?, dropped: inout Int) -> [R]? {
        changes.reduce(records) { $1.applied(to: $0, current: (records, tail), dropped: &dropped) }
    }

    /// What the file holds, as a base for a change made now (see
    /// ``Change/base``), when memory knows it, `stamps` show it unchanged,
    /// and no write of it is under way; `nil` otherwise. Engine lock held.
    func base(matching stamps: (data: FileStamp?, sidecar: FileStamp?)) -> Change<R>.Base? {
        guard writing.isEmpty, let (records, tail) = diskRecords, Self.matches(records, tail, stamps) else { return nil }
        return Change<R>.Base(records: records, tail: tail)
    }

    /// The records dropped by retention in the write just staged.
    var droppedInWrite: Int { installing.dropped }

    @_specialize(where R == ChatMessage)
    func finish(tail: RecordFile.Tail?) {
        if let (onDiskCount, added, read) = appending, let tail {
            finishAppend(onDiskCount: onDiskCount, added: added, read: read, tail: tail)
        } else {
            let records = installing.records
            if let tail, let records, tail.lineCount == records.count {
                setDisk(.known(records: records, tail: tail))
            } else {
                setDisk(records == nil ? .known(records: nil, tail: nil) : .unknown)
            }
            setView(.none, extendsDisk: false)
        }
        writing = []
        installing = (nil, 0)
        appending = nil
        updateCost()
    }

    /// After lines were appended: the records on disk are those before and
    /// `added`, kept as a prefix of the view whenever the view holds them.
    private func finishAppend(onDiskCount: Int, added: [R], read: [R]?, tail: RecordFile.Tail) {
        let count = onDiskCount + added.count
        guard tail.lineCount == count else {
            setDisk(.unknown)
            setView(.none, extendsDisk: false)
            return
        }
        if var records = read {
            // The write read the file: what memory held was out of date, the view with it.
            records.append(contentsOf: added)
            setDisk(.known(records: records, tail: tail))
            setView(.none, extendsDisk: false)
            return
        }
        var ids = diskIDs
        diskIDs = nil
        if let rule, ids != nil { for record in added { ids!.insert(rule.id(record)) } }
        if case .summary(_, let last, _) = disk, ids != nil {
            disk = .summary(count: count, last: added.last ?? last, tail: tail)
        } else if viewExtendsDisk, case .some(let records?) = view, records.count >= count {
            // The view is the old records, `added`, then what `pending` added: the file is its first `count`.
            disk = .viewPrefix(count: count, tail: tail)
        } else if var records = diskRecords?.records ?? nil {
            // Taken out of `disk` first, so that the append below is in place.
            disk = .unknown
            records.append(contentsOf: added)
            if pending.isEmpty && memoryOnly.isEmpty {
                setView(.some(records), extendsDisk: true)
                disk = .viewPrefix(count: count, tail: tail)
            } else {
                disk = .known(records: records, tail: tail)
                setView(.none, extendsDisk: false)
            }
        } else {
            setDisk(.unknown)
            setView(.none, extendsDisk: false)
            return
        }
        diskIDs = ids
    }

    func abandon(keepingChanges: Bool, staged: Bool) {
        if keepingChanges {
            pending = writing + pending
        } else if !staged {
            pending = []
        }
        writing = []
        setDisk(.unknown)
        setView(.none, extendsDisk: false)
        installing = (nil, 0)
        appending = nil
        updateCost()
    }

    /// The records on disk and their tail (copied out of the view for a
    /// prefix of it); `nil` when unknown. Engine lock held.
    private var diskRecords: (records: [R]?, tail: RecordFile.Tail?)? {
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

    private func setDisk(_ new: Disk) {
        disk = new
        diskIDs = nil
    }

    private func setView(_ new: [R]??, extendsDisk: Bool) {
        detachDisk()
        (view, viewIDs, viewExtendsDisk) = (new, nil, extendsDisk)
    }

    private func updateCost() {
        // The view shares the disk records' storage until a change copies it: count the larger.
        var count = 0
        if case .known(let records?, _) = disk { count = records.count }
        if case .some(let records?) = view { count = max(count, records.count) }
        // A change holds its records until written: an append's are known, other changes count as one.
        count += unwritten.reduce(0) { $0 + ($1.appended?.records.count ?? 1) }
        let ids = (viewIDs?.count ?? 0) + (diskIDs?.count ?? 0)
        cost = count * recordCost + 256 + ids * 16
    }
}
