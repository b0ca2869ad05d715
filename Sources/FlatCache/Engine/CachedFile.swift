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
    /// Forgets its records (keeps changes not yet written). Engine lock held.
    func evict()
    /// Takes the changes waiting and stages their write. File lock held.
    func stage(in engine: CacheEngine) throws(FlatCacheError) -> StagedStep
    /// The records retention dropped in the write just staged.
    var droppedInWrite: Int { get }
    /// Records what the write left on disk (`tail`: `nil` when the file is gone). Engine lock held.
    func finish(tail: RecordFile.Tail?)
    /// After a failed write: keeps the changes for the next write, or drops
    /// them and forgets what is on disk. Engine lock held.
    func abandon(keepingChanges: Bool)
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
final class CachedFile<R: CacheRecord>: EngineFile, @unchecked Sendable {
    let file: RecordFile
    let rule: AppendRule<R>?

    // Guarded by the engine's lock, except `installing` and `appending` (by the file's lock).
    /// What is on disk, when known: `records` nil for no file.
    private(set) var disk: Disk = .unknown
    private(set) var pending = [Change<R>]()
    private var writing = [Change<R>]()
    /// `disk` with `writing` and `pending` applied; `.none` until computed.
    private var view: [R]?? = .none {
        didSet { if case .none = view { viewIDs = nil } }
    }
    /// The ids of `view`'s records, once an append needed them.
    private var viewIDs: Set<Int64>?
    private(set) var cost = 0
    var lastUse: UInt64 = 0
    /// Estimated memory per record, from the bytes last read or written.
    private var recordCost = 512
    private var installing: (records: [R]?, dropped: Int) = (nil, 0)
    /// For a write that appends: the records on disk before it, and those it added.
    private var appending: (onDisk: [R], added: [R])?

    enum Disk {
        case unknown
        case known(records: [R]?, tail: RecordFile.Tail?)
    }

    init(file: RecordFile, rule: AppendRule<R>?) {
        self.file = file
        self.rule = rule
    }

    var isDirty: Bool { !pending.isEmpty || !writing.isEmpty }

    /// The records with every change applied, when what is on disk is known
    /// and still what is there (`stamps`, of the data file and its sidecar);
    /// `.none` otherwise. Engine lock held.
    func current(onDisk stamps: (data: FileStamp?, sidecar: FileStamp?)) -> [R]?? {
        guard case .known(let records, let tail) = disk, Self.matches(records, tail, stamps) else { return .none }
        if case .some(let computed) = view { return .some(computed) }
        var ignored = 0
        let computed = (writing + pending).reduce(records) { $1.apply($0, &ignored) }
        view = .some(computed)
        updateCost()
        return .some(computed)
    }

    /// Installs what a read found on disk; returns the records with changes applied. Engine lock held.
    func install(read records: [R]?, tail: RecordFile.Tail?, bytes: Int) -> [R]? {
        if let records, !records.isEmpty { recordCost = bytes / records.count + 64 }
        disk = records == nil || tail != nil ? .known(records: records, tail: tail) : .unknown
        var ignored = 0
        let computed = (writing + pending).reduce(records) { $1.apply($0, &ignored) }
        view = tail == nil && records != nil ? .none : .some(computed)
        updateCost()
        return computed
    }

    /// Adds a change; the records in memory follow it at once. Engine lock held.
    ///
    /// A change that only adds records after the last one (a new message)
    /// is appended to the records in place, checked against their ids kept
    /// beside them: its cost does not grow with the channel.
    func add(_ change: Change<R>) {
        pending.append(change)
        guard case .some(var records) = view else { return }
        var knownIDs = viewIDs
        // Now `records` and `knownIDs` hold the only references (`view`'s observer drops the ids): they grow in place.
        view = .none
        if let rule, let appended = change.appended, records != nil {
            if knownIDs == nil { knownIDs = Set(records!.indices.lazy.map { rule.id(records![$0]) }) }
            if rule.allows(records!, appended.records, ids: knownIDs) {
                records!.append(contentsOf: appended.records)
                for record in appended.records { knownIDs!.insert(rule.id(record)) }
                view = .some(records)
                viewIDs = knownIDs
                updateCost()
                return
            }
        }
        var ignored = 0
        view = .some(change.apply(records, &ignored))
        viewIDs = nil
        updateCost()
    }

    func evict() {
        // "No file" costs nothing to remember; records go.
        if case .known(_?, _) = disk { disk = .unknown }
        view = .none
        updateCost()
    }

    func stage(in engine: CacheEngine) throws(FlatCacheError) -> StagedStep {
        let (changes, known) = engine.locked { () -> ([Change<R>], Disk) in
            writing = pending
            pending = []
            return (writing, disk)
        }
        guard !changes.isEmpty else { return .noChanges }
        let stamps = try file.stamps()
        let stamp = stamps.data
        var onDisk: [R]?
        var tail: RecordFile.Tail?
        // Changes from the last one that replaces everything on need not know what is on disk.
        let start = changes.lastIndex(where: \.replacesAll) ?? 0
        if case .known(let records, let knownTail) = known, Self.matches(records, knownTail, stamps) {
            (onDisk, tail) = (records, knownTail)
        } else if start == 0, !changes[0].replacesAll {
            let read = try engine.storage.loadLocked(file, as: R.self)
            (onDisk, tail) = (read.records, read.tail)
        }
        // New records after the last: append their lines, without applying the changes one by one.
        if let onDisk, let tail, let rule, let appended = Self.appended(changes), rule.allows(onDisk, appended.records),
            let staged = try file.stageAppend(appended.lines, after: tail)
        {
            (installing, appending) = ((nil, 0), (onDisk, appended.records))
            return .write(staged)
        }
        var dropped = 0
        let result = changes[start...].reduce(onDisk) { $1.apply($0, &dropped) }
        installing = (result, dropped)
        guard let result else { return stamp == nil ? .nothing : .remove }
        return .write(try engine.storage.stageReplace(file, try engine.storage.serialize(result)))
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

    /// The records dropped by retention in the write just staged.
    var droppedInWrite: Int { installing.dropped }

    func finish(tail: RecordFile.Tail?) {
        var records = installing.records
        var viewIsDisk = false
        if let (onDisk, added) = appending {
            // The records in memory are those on disk now when no change came
            // since and none was cut by retention (the same count): keep them, uncopied.
            if pending.isEmpty, case .some(let current?) = view, current.count == onDisk.count + added.count {
                (records, viewIsDisk) = (current, true)
            } else {
                records = onDisk + added
            }
        }
        if let tail, let records, tail.lineCount == records.count {
            disk = .known(records: records, tail: tail)
        } else {
            disk = records == nil ? .known(records: nil, tail: nil) : .unknown
            viewIsDisk = false
        }
        writing = []
        if !viewIsDisk { view = .none }
        installing = (nil, 0)
        appending = nil
        updateCost()
    }

    func abandon(keepingChanges: Bool) {
        if keepingChanges { pending = writing + pending }
        writing = []
        disk = .unknown
        view = .none
        installing = (nil, 0)
        appending = nil
        updateCost()
    }

    private func updateCost() {
        // The view shares the disk records' storage until a change copies it: count the larger.
        var count = 0
        if case .known(let records?, _) = disk { count = records.count }
        if case .some(let records?) = view { count = max(count, records.count) }
        count += pending.count + writing.count
        cost = count * recordCost + 256 + (viewIDs?.count ?? 0) * 16
    }
}
