import Foundation
import Logging

/// The cache's engine: the memory tier in front of the files, write-behind
/// with coalescing, and the threads that do the disk work.
///
/// Loads look in memory first; a file still in memory is trusted after one
/// `stat` shows nobody wrote it since (another process's write changes its
/// stamp, and the next load reads it again). Changes go to memory at once
/// and are written together a short while later (``writeDelay``), one write
/// per file however many changes it had, applied to what is on disk at that
/// moment. Memory is bounded by an estimate of the records' bytes; files
/// least recently used leave first, never while they hold changes not yet written.
final class CacheEngine: @unchecked Sendable {
    let storage: RecordStorage
    /// The memory tier's budget in estimated bytes; 0 keeps nothing.
    let memoryLimit: Int
    /// How long changes wait to be written together; 0 writes before a save returns.
    let writeDelay: Duration
    /// Usage times, expiry and the size limit: told of every write.
    let policy: CachePolicy
    /// Runs a sweep (on ``writeQueue``) when writes may have crossed the size limit.
    private let sweeper: @Sendable (CacheEngine) -> Void
    /// The folder's observers in this process: told of every change that lands, in memory or on disk.
    let hub: ChangeHub

    // Lock rule (docs/reliability.md, "Liveness"): held only to read or change what memory knows,
    // never across disk work; nothing is resumed, yielded or called out while it is held (the
    // ChangeHub fires on its own queue). Taken inside a file's stripe lock, never the other way round.
    private let lock = NSLock()
    // Guarded by `lock`.
    private var files = [String: any EngineFile]()
    private var totalCost = 0
    private var clock: UInt64 = 0
    private var flushScheduled = false
    private var counts = Counts()

    /// How loads were answered since the engine started.
    struct Counts: Hashable, Sendable {
        /// Loads answered from memory.
        var memoryHits = 0
        /// Loads memory could not answer.
        var memoryMisses = 0
        /// Of those, loads that found their file.
        var diskHits = 0
        /// Loads that found no file (or a damaged one).
        var diskMisses = 0
    }

    /// Where write-behind flushes and ``flush()`` run, one at a time.
    let writeQueue = DispatchQueue(label: "FlatCache.write", qos: .utility)
    /// Where `async` loads read files; several at once.
    let readQueue = DispatchQueue(label: "FlatCache.read", qos: .userInitiated, attributes: .concurrent)

    init(
        storage: RecordStorage, memoryLimit: Int, writeDelay: Duration, policy: CachePolicy,
        sweeper: @escaping @Sendable (CacheEngine) -> Void
    ) {
        self.storage = storage
        self.memoryLimit = memoryLimit
        self.writeDelay = writeDelay
        self.policy = policy
        self.sweeper = sweeper
        hub = ChangeHub.shared(forFolder: storage.root)
    }

    /// Runs `body` holding the engine's lock (never across disk work).
    func locked<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }

    // MARK: - Reads

    /// The records of `file` with every change applied, from memory when it
    /// holds them and the file is unchanged on disk, else read (and kept).
    ///
    /// Blocks: call it from ``readQueue`` (or a thread that may block).
    func records<R: CacheRecord>(
        _ file: RecordFile, rule: AppendRule<R>? = nil, tier: CacheTier = .memoryAndDisk
    ) throws(FlatCacheError) -> [R]? {
        switch tier {
        case .memory: return try memoryOnlyRecords(file)
        case .disk: return try diskRecords(file, as: R.self)
        case .memoryAndDisk: break
        }
        if case .some(let hit) = try memoryHit(file, as: R.self) { return hit }
        return try storage.withLock(file) { () throws(FlatCacheError) -> [R]? in
            let read = try storage.loadLocked(file, as: R.self)
            return locked {
                counts.memoryMisses += 1
                if read.records == nil { counts.diskMisses += 1 } else { counts.diskHits += 1 }
                let entry = self.entry(file, rule: rule)
                let before = entry.cost
                let records = entry.install(read: read.records, tail: read.tail, bytes: read.bytes)
                settle(entry, costBefore: before)
                return records
            }
        }
    }

    /// ``CacheTier/memory``: the records of `file` from memory, or `nil`; never a read.
    func memoryOnlyRecords<R: CacheRecord>(_ file: RecordFile) throws(FlatCacheError) -> [R]? {
        if case .some(let hit) = try memoryHit(file, as: R.self) { return hit }
        locked { counts.memoryMisses += 1 }
        return nil
    }

    /// ``CacheTier/disk``: the records in `file` as read now, after its
    /// changes waiting for write-behind are written; nothing kept in memory.
    /// Blocks.
    func diskRecords<R: CacheRecord>(_ file: RecordFile, as type: R.Type) throws(FlatCacheError) -> [R]? {
        try writeWaitingChanges(file)
        return try storage.withLock(file) { () throws(FlatCacheError) -> [R]? in
            let read = try storage.loadLocked(file, as: R.self)
            locked { if read.records == nil { counts.diskMisses += 1 } else { counts.diskHits += 1 } }
            return read.records
        }
    }

    /// Writes the changes waiting for `file` now, as a flush would. Blocks.
    func writeWaitingChanges(_ file: RecordFile) throws(FlatCacheError) {
        guard let entry = locked({ files[file.path] }), locked({ entry.isDirty }) else { return }
        for report in write([entry], keepingChangesOnFailure: false) { _ = try report.outcome.get() }
    }

    /// Drops `file` from memory after a ``CacheTier/disk`` write, unless changes wait for it.
    func forgetWritten(_ file: RecordFile) {
        locked {
            guard let entry = files[file.path], !entry.isDirty else { return }
            totalCost -= entry.cost
            entry.forget()
            files[file.path] = nil
        }
    }

    /// The records of `file` from memory, when it holds them and one `stat`
    /// shows the file unchanged; `.none` otherwise. No read, no file lock.
    func memoryHit<R: CacheRecord>(_ file: RecordFile, as type: R.Type) throws(FlatCacheError) -> [R]?? {
        guard let entry = cachedEntry(file, as: R.self) else { return .none }
        return current(entry, onDisk: try file.stamps())
    }

    /// The entry of `file` when it holds records of type `R`.
    @_specialize(where R == ChatMessage)
    private func cachedEntry<R: CacheRecord>(_ file: RecordFile, as type: R.Type) -> CachedFile<R>? {
        locked { files[file.path] as? CachedFile<R> }
    }

    /// `entry`'s records when `stamps` show its file as memory knows it.
    @_specialize(where R == ChatMessage)
    private func current<R: CacheRecord>(
        _ entry: CachedFile<R>, onDisk stamps: (data: FileStamp?, sidecar: FileStamp?)
    ) -> [R]?? {
        locked {
            // Still the file's entry (not evicted from the engine meanwhile).
            guard files[entry.file.path] === entry else { return .none }
            let before = entry.cost
            let found = entry.current(onDisk: stamps)
            if found != nil {
                counts.memoryHits += 1
                settle(entry, costBefore: before)
            }
            return found
        }
    }

    /// ``records(_:rule:)`` for `async` callers: a memory hit is answered
    /// on the caller's thread (two `stat`s, no read, no file lock); a miss is
    /// read on ``readQueue``, never on a cooperative-pool thread.
    func records<R: CacheRecord>(
        _ file: RecordFile, rule: AppendRule<R>? = nil, tier: CacheTier = .memoryAndDisk
    ) async throws(FlatCacheError) -> [R]? {
        if tier == .memory { return try memoryOnlyRecords(file) }
        if tier == .memoryAndDisk, case .some(let hit) = try memoryHit(file, as: R.self) { return hit }
        return try await BlockingWork.run(on: readQueue) { () throws(FlatCacheError) in
            try self.records(file, rule: rule, tier: tier)
        }
    }

    /// Runs blocking `work` on ``readQueue`` for an `async` caller.
    func reading<T: Sendable>(_ work: @escaping @Sendable () throws(FlatCacheError) -> T) async throws(FlatCacheError) -> T {
        try await BlockingWork.run(on: readQueue, work)
    }

    /// Runs blocking `work` on ``writeQueue`` (after write-behind flushes already started) for an `async` caller.
    func writing<T: Sendable>(_ work: @escaping @Sendable () throws(FlatCacheError) -> T) async throws(FlatCacheError) -> T {
        try await BlockingWork.run(on: writeQueue, work)
    }

    // MARK: - Changes

    /// Adds `changes` in memory for an `async` save: returns at once, the
    /// files are written within ``writeDelay``; with a delay of zero, written
    /// before it returns.
    /// - Returns: The files written (``CacheTier/disk``, or a delay of zero:
    ///   what that flush wrote) or scheduled for write-behind; nothing for ``CacheTier/memory``.
    @discardableResult
    func add<R: CacheRecord>(
        _ changes: [(RecordFile, Change<R>)], rule: AppendRule<R>? = nil, tier: CacheTier = .memoryAndDisk
    ) async throws(FlatCacheError) -> SaveResult {
        switch tier {
        case .memory:
            for (file, change) in changes {
                if case .none = try memoryHit(file, as: R.self) {
                    try await reading { () throws(FlatCacheError) in try self.readIntoMemory(file, rule: rule) }
                }
                addMemoryOnly(change, to: file, rule: rule)
            }
            return SaveResult()
        case .disk:
            return try await writing { () throws(FlatCacheError) in
                var result = SaveResult()
                for (file, change) in changes {
                    let written = try self.write(change, to: file, rule: rule, tier: .disk)
                    result.count(written.outcome)
                    result.recordsDropped += written.dropped
                }
                return result
            }
        case .memoryAndDisk:
            for (file, change) in changes {
                if change.rebase != nil {
                    try await add(replacing: change, to: file, rule: rule)
                } else {
                    add(change, to: file, rule: rule)
                }
            }
            if writeDelay == .zero { return try await flush() }
            return SaveResult(filesScheduled: changes.count)
        }
    }

    /// Makes memory hold `file` as it is on disk (read when memory does not
    /// hold it current), so that a memory-only change applies over what the
    /// file holds and a memory-only load sees it. Blocks.
    func readIntoMemory<R: CacheRecord>(_ file: RecordFile, rule: AppendRule<R>?) throws(FlatCacheError) {
        let _: [R]? = try records(file, rule: rule, tier: .memoryAndDisk)
    }

    /// Adds `change` to `file` for memory only (``CacheTier/memory``): never
    /// written. Memory is to hold the file already (``readIntoMemory(_:rule:)``).
    func addMemoryOnly<R: CacheRecord>(_ change: Change<R>, to file: RecordFile, rule: AppendRule<R>? = nil) {
        locked {
            let entry = self.entry(file, rule: rule)
            let before = entry.cost
            entry.addMemoryOnly(change)
            settle(entry, costBefore: before)
        }
        hub.changed(file.path)
    }

    /// Adds `change` to `file` in memory and schedules its write.
    @discardableResult
    @_specialize(where R == ChatMessage)
    func add<R: CacheRecord>(_ change: Change<R>, to file: RecordFile, rule: AppendRule<R>? = nil) -> CachedFile<R> {
        let entry = locked {
            let entry = self.entry(file, rule: rule)
            let before = entry.cost
            entry.add(change)
            settle(entry, costBefore: before)
            return entry
        }
        hub.changed(file.path)
        if writeDelay > .zero { scheduleFlush() }
        return entry
    }

    /// Adds `change`, which replaces the records of `file`, in memory with
    /// what the file holds now as its ``Change/base``, and schedules its
    /// write: the write then carries over it what other writers (instances,
    /// processes) wrote to the file in between, as if it had been written now.
    ///
    /// The base comes from memory when it knows the file and one `stat`
    /// shows it unchanged; else the file is read on ``readQueue``, holding
    /// its lock (so that no write comes in between), and kept.
    func add<R: CacheRecord>(replacing change: Change<R>, to file: RecordFile, rule: AppendRule<R>?) async throws(FlatCacheError) {
        let stamps = try file.stamps()
        let added = locked { () -> Bool in
            guard let entry = files[file.path] as? CachedFile<R>, let base = entry.base(matching: stamps) else { return false }
            add(change, base: base, to: entry, costBefore: entry.cost)
            return true
        }
        if !added {
            try await reading { () throws(FlatCacheError) in
                try self.storage.withLock(file) { () throws(FlatCacheError) in
                    let read = try self.storage.loadLocked(file, as: R.self)
                    self.locked {
                        // Installed and added before the entry settles: a trim in between could drop it, and the change with it.
                        let entry = self.entry(file, rule: rule)
                        let before = entry.cost
                        _ = entry.install(read: read.records, tail: read.tail, bytes: read.bytes)
                        self.add(change, base: Change.Base(records: read.records, tail: read.tail), to: entry, costBefore: before)
                    }
                }
            }
        }
        hub.changed(file.path)
        if writeDelay > .zero { scheduleFlush() }
    }

    /// Adds `change` with `base` to `entry`, whose cost was `costBefore`, and settles it. Lock held.
    private func add<R: CacheRecord>(_ change: Change<R>, base: Change<R>.Base, to entry: CachedFile<R>, costBefore: Int) {
        var change = change
        change.base = base
        entry.add(change)
        settle(entry, costBefore: costBefore)
    }

    /// Adds `change` and writes `file` at once, with any changes waiting for
    /// it: what the synchronous API does. Blocks.
    ///
    /// The change is added holding the file's lock, so that no flush under
    /// way takes it: this call's outcome is its own write's.
    func write<R: CacheRecord>(
        _ change: Change<R>, to file: RecordFile, rule: AppendRule<R>? = nil, tier: CacheTier = .memoryAndDisk
    ) throws(FlatCacheError) -> (outcome: RecordFile.WriteOutcome?, dropped: Int) {
        switch tier {
        case .memory:
            try readIntoMemory(file, rule: rule)
            addMemoryOnly(change, to: file, rule: rule)
            return (nil, 0)
        case .disk:
            defer { forgetWritten(file) }
            return try write(change, to: file, rule: rule)
        case .memoryAndDisk:
            return try write(change, to: file, rule: rule)
        }
    }

    private func write<R: CacheRecord>(
        _ change: Change<R>, to file: RecordFile, rule: AppendRule<R>?
    ) throws(FlatCacheError) -> (outcome: RecordFile.WriteOutcome?, dropped: Int) {
        try storage.withLock(file) { () throws(FlatCacheError) in
            let entry = locked {
                let entry = self.entry(file, rule: rule)
                let before = entry.cost
                entry.add(change)
                settle(entry, costBefore: before)
                return entry
            }
            let report = writeLocked([entry], keepingChangesOnFailure: false)[0]
            return (try report.outcome.get(), report.dropped)
        }
    }

    /// Removes `file` now, whatever its record type, with changes waiting
    /// for it dropped. Blocks.
    func remove(_ file: RecordFile) throws(FlatCacheError) {
        try storage.withLock(file) { () throws(FlatCacheError) in
            // Under the file's lock no write of it is under way: its waiting changes can go.
            locked {
                if let entry = files.removeValue(forKey: file.path) {
                    totalCost -= entry.cost
                    entry.abandon(keepingChanges: false, staged: false)
                }
            }
            try file.remove()
            policy.usage.forget(CollectionOfOne(file.name))
        }
        hub.changed(file.path)
    }

    /// Removes `file` for a sweep, unless it has changes waiting or its
    /// stamp is no longer `stamp` (someone wrote it since the sweep looked).
    /// Blocks. Returns whether it removed the file.
    func removeIfUnchanged(_ file: RecordFile, stamp: FileStamp) throws(FlatCacheError) -> Bool {
        try storage.withLock(file) { () throws(FlatCacheError) -> Bool in
            guard !(locked { files[file.path]?.isDirty ?? false }), try FileSystem.stamp(at: file.path) == stamp else {
                return false
            }
            locked {
                if let entry = files.removeValue(forKey: file.path) {
                    totalCost -= entry.cost
                    entry.abandon(keepingChanges: false, staged: false)
                }
            }
            try file.remove()
            hub.changed(file.path)
            return true
        }
    }

    /// How loads were answered, and what memory holds: its estimated bytes and its files (those with changes waiting included).
    var statistics: (counts: Counts, bytes: Int, entries: Int) {
        locked { (counts, totalCost, files.values.filter { !$0.isEvicted || $0.isDirty || $0.hasMemoryOnlyChanges }.count) }
    }

    /// For every file with changes waiting for write-behind (or memory-only
    /// ones), by path, how many records it holds with them applied (`nil`:
    /// no file then): what ``ChatCache/statistics()`` counts for it instead
    /// of its lines on disk. Reads a file memory does not know; blocks.
    func recordCountsWithChanges() throws(FlatCacheError) -> [String: Int?] {
        let changed = locked { files.values.filter { $0.isDirty || $0.hasMemoryOnlyChanges } }
        var counts = [String: Int?]()
        for entry in changed { counts[entry.file.path] = try entry.recordCount(in: self) }
        return counts
    }

    // MARK: - Flushing

    /// Writes every file with changes waiting; returns when they are on
    /// disk. A file that fails keeps nothing in memory that did not land.
    /// Blocks: runs on ``writeQueue``.
    func flushNow() throws(FlatCacheError) -> SaveResult {
        let dirty = locked { files.values.filter(\.isDirty) }
        var result = SaveResult()
        var firstFailure: FlatCacheError?
        for report in write(dirty, keepingChangesOnFailure: false) {
            switch report.outcome {
            case .success(let outcome):
                result.count(outcome)
                result.recordsDropped += report.dropped
            case .failure(let error): firstFailure = firstFailure ?? error
            }
        }
        if let firstFailure { throw firstFailure }
        policy.persistUsageIfDue()
        return result
    }

    /// ``flushNow()``, then the usage times whatever their age: what closing does.
    func closeNow() throws(FlatCacheError) -> SaveResult {
        let result = try flushNow()
        policy.persistUsage()
        return result
    }

    /// Waits until every change made before the call is on disk (see ``flushNow()``).
    func flush() async throws(FlatCacheError) -> SaveResult {
        try await BlockingWork.run(on: writeQueue) { () throws(FlatCacheError) in try self.flushNow() }
    }

    /// Forgets every file and every change not yet written: after the folder was emptied.
    /// Call holding every file lock, so that no write is under way.
    func forgetAll() {
        locked {
            for entry in files.values { entry.abandon(keepingChanges: false, staged: false) }
            files = [:]
            totalCost = 0
        }
        hub.changedEverything()
    }

    /// Starts a write-behind flush after ``writeDelay``, unless one is waiting.
    private func scheduleFlush() {
        let start = locked { () -> Bool in
            defer { flushScheduled = true }
            return !flushScheduled
        }
        guard start else { return }
        let delay = writeDelay.components
        let nanoseconds = Int(delay.seconds) * 1_000_000_000 + Int(delay.attoseconds / 1_000_000_000)
        writeQueue.asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { [self] in
            locked { flushScheduled = false }
            flushInBackground()
        }
    }

    /// A write-behind flush: failures keep their changes for the next flush
    /// (which reports them) and are logged now.
    private func flushInBackground() {
        let dirty = locked { files.values.filter(\.isDirty) }
        var failed = false
        for report in write(dirty, keepingChangesOnFailure: true) {
            if case .failure(let error) = report.outcome {
                failed = true
                storage.logger.error(
                    "FlatCache could not write a file; the change stays in memory and flush() will report it",
                    metadata: ["file": "\(report.file.path)", "error": "\(error)"])
            }
        }
        // The usage times wait for a write that works: they only order sweeps.
        if !failed { policy.persistUsageIfDue() }
    }

    /// What a write did to one file.
    struct WriteReport {
        let file: RecordFile
        let outcome: Result<RecordFile.WriteOutcome?, FlatCacheError>
        let dropped: Int
    }

    /// Writes the waiting changes of `targets` together (see ``writeLocked(_:keepingChangesOnFailure:)``),
    /// taking their files' locks.
    private func write(_ targets: [any EngineFile], keepingChangesOnFailure: Bool) -> [WriteReport] {
        guard !targets.isEmpty else { return [] }
        do {
            return try storage.withLocks(targets.map(\.file)) { () throws(FlatCacheError) in
                writeLocked(targets, keepingChangesOnFailure: keepingChangesOnFailure)
            }
        } catch {
            // The locks could not be taken: nothing was staged, and every change waiting was part of this write.
            let failures = Array(repeating: Result<StagedStep, FlatCacheError>.failure(error), count: targets.count)
            return settle(targets, Slots(failures), dropped: Slots(repeating: 0, count: targets.count),
                          keepingChangesOnFailure: keepingChangesOnFailure, staged: false)
        }
    }

    /// Writes the waiting changes of `targets` together: every file staged,
    /// then (synchronized) all synced at once, then all committed, then the
    /// commits synced; each file either lands or keeps its old content. Then
    /// memory learns what is on disk, still under the files' locks, so that
    /// no read or write of them comes in between. Call holding their locks.
    private func writeLocked(_ targets: [any EngineFile], keepingChangesOnFailure: Bool) -> [WriteReport] {
        let steps = Slots<Result<StagedStep, FlatCacheError>>(repeating: .success(.noChanges), count: targets.count)
        let dropped = Slots(repeating: 0, count: targets.count)
        let cores = ProcessInfo.processInfo.activeProcessorCount
        BlockingWork.forEach(targets.count, width: targets.count >= 8 ? cores : 1) { index in
            steps[index] = Result { () throws(FlatCacheError) in try targets[index].stage(in: self) }
            dropped[index] = targets[index].droppedInWrite
        }
        if storage.synchronized { synchronizeStaged(steps) }
        commit(steps, files: targets.map(\.file))
        if storage.synchronized { synchronizeCommitted(steps) }
        return settle(targets, steps, dropped: dropped, keepingChangesOnFailure: keepingChangesOnFailure, staged: true)
    }

    /// Tells each target what its write did, and reports it.
    private func settle(
        _ targets: [any EngineFile], _ steps: Slots<Result<StagedStep, FlatCacheError>>, dropped: Slots<Int>,
        keepingChangesOnFailure: Bool, staged: Bool
    ) -> [WriteReport] {
        var written = 0
        var stamps = [(name: String, stamp: FileStamp)]()
        var changed = [String]()
        let reports = locked {
            var reports = [WriteReport]()
            for (index, target) in targets.enumerated() {
                let before = target.cost
                let outcome: Result<RecordFile.WriteOutcome?, FlatCacheError>
                switch steps[index] {
                case .success(.write(let staged)):
                    target.finish(tail: staged.tail)
                    changed.append(target.file.path)
                    outcome = .success(staged.outcome)
                    written += staged.bytesWritten
                    if staged.bytesWritten > 0 { stamps.append((staged.file.name, staged.tail.stamp)) }
                case .success(.remove), .success(.nothing):
                    target.finish(tail: nil)
                    changed.append(target.file.path)
                    outcome = .success(nil)
                case .success(.noChanges):
                    outcome = .success(nil)
                case .failure(let error):
                    target.abandon(keepingChanges: keepingChangesOnFailure, staged: staged)
                    outcome = .failure(error)
                }
                settle(target, costBefore: before)
                reports.append(WriteReport(file: target.file, outcome: outcome, dropped: dropped[index]))
            }
            trim()
            return reports
        }
        if !stamps.isEmpty { policy.usage.wrote(stamps) }
        // On disk now: what other instances on the folder read (this one knew it from memory).
        hub.changed(changed)
        if policy.wrote(bytes: written) { writeQueue.async { [self] in sweeper(self) } }
        return reports
    }

    private func synchronizeStaged(_ steps: Slots<Result<StagedStep, FlatCacheError>>) {
        BlockingWork.forEach(steps.all.count, width: 8) { index in
            guard case .success(.write(let staged)) = steps[index] else { return }
            do throws(FlatCacheError) {
                try staged.file.synchronize(staged)
            } catch {
                staged.file.discard(staged)
                steps[index] = .failure(error)
            }
        }
    }

    private func commit(_ steps: Slots<Result<StagedStep, FlatCacheError>>, files: [RecordFile]) {
        for index in steps.all.indices {
            do throws(FlatCacheError) {
                switch steps[index] {
                case .success(.write(var staged)):
                    try staged.file.commit(&staged)
                    steps[index] = .success(.write(staged))
                case .success(.remove):
                    try files[index].remove()
                default:
                    continue
                }
            } catch {
                steps[index] = .failure(error)
            }
        }
    }

    /// Syncs the sidecars appends wrote in place, and once each folder where files were renamed.
    private func synchronizeCommitted(_ steps: Slots<Result<StagedStep, FlatCacheError>>) {
        var folders = [String: [Int]]()
        var sidecars = [Int]()
        for (index, step) in steps.all.enumerated() {
            guard case .success(.write(let staged)) = step else { continue }
            switch staged.kind {
            case .unchanged: break
            case .append: sidecars.append(index)
            case .replace: folders[FileSystem.parent(of: staged.file.path), default: []].append(index)
            }
        }
        let folderList = Array(folders)
        let sidecarIndices = sidecars
        BlockingWork.forEach(sidecarIndices.count + folderList.count, width: 8) { job in
            do throws(FlatCacheError) {
                if job < sidecarIndices.count {
                    guard case .success(.write(let staged)) = steps[sidecarIndices[job]] else { return }
                    try FileSystem.synchronizeFile(at: staged.file.sidecarPath)
                } else {
                    try FileSystem.synchronizeDirectory(at: folderList[job - sidecarIndices.count].key)
                }
            } catch {
                let failed = job < sidecarIndices.count ? [sidecarIndices[job]] : folderList[job - sidecarIndices.count].value
                for index in failed { steps[index] = .failure(error) }
            }
        }
    }

    // MARK: - Memory

    /// Whether a part of `file` may be read without keeping the file: when
    /// memory holds none of its records, unless a part of it was read a
    /// moment ago (within the last ``recentUses`` uses of any file): a chat
    /// screen paging through one channel then gets it whole and kept, while
    /// pages scattered over more channels than memory holds stay partial reads.
    func isFirstTouch<R: CacheRecord>(_ file: RecordFile, rule: AppendRule<R>?) -> Bool {
        locked {
            clock += 1
            let known = files[file.path]
            if let known {
                guard known.isEvicted, !known.isDirty, !known.hasMemoryOnlyChanges else { return false }
                if let last = known.readInPart, clock - last <= Self.recentUses { return false }
            }
            (known ?? entry(file, rule: rule)).readInPart = clock
            return true
        }
    }

    /// How many uses of files after a partial read of one its next read counts as "a moment later".
    static let recentUses: UInt64 = 16

    /// Whether `file` has changes not yet written (memory-only ones too, unless `ignoringMemoryOnly`).
    func hasChangesWaiting(_ file: RecordFile, ignoringMemoryOnly: Bool = false) -> Bool {
        locked {
            guard let entry = files[file.path] else { return false }
            return entry.isDirty || (!ignoringMemoryOnly && entry.hasMemoryOnlyChanges)
        }
    }

    /// The entry for `file`, created when missing. Lock held.
    @_specialize(where R == ChatMessage)
    private func entry<R: CacheRecord>(_ file: RecordFile, rule: AppendRule<R>?) -> CachedFile<R> {
        if let entry = files[file.path] as? CachedFile<R> { return entry }
        if let other = files[file.path] {
            // One path is read with one record type; another type can only be a leftover.
            precondition(!other.isDirty, "\(file.path) has changes of another record type waiting")
            totalCost -= other.cost
        }
        let entry = CachedFile<R>(file: file, rule: rule)
        files[file.path] = entry
        return entry
    }

    /// Marks `entry` used, accounts for its new cost, and trims. Lock held.
    private func settle(_ entry: any EngineFile, costBefore: Int) {
        clock += 1
        entry.lastUse = clock
        totalCost += entry.cost - costBefore
        trim()
    }

    /// Forgets every file memory holds but those with changes waiting for
    /// write-behind, which stay whole until written: what a memory warning
    /// asks. Memory-only changes go with their files, as under the budget.
    /// Takes the engine's lock only (no disk work): returns at once.
    func trimMemory() {
        locked {
            for entry in files.values where !entry.isDirty {
                totalCost -= entry.cost
                entry.forget()
                files[entry.file.path] = nil
            }
        }
    }

    /// Evicts the least recently used files without waiting changes until
    /// the memory tier is within its budget (to 90% of it, so that eviction
    /// runs now and then rather than on every load). Lock held.
    ///
    /// An evicted file keeps a summary for appends (its ids: about 16 bytes
    /// a record, a tenth of its records' cost or less). Summaries may take a
    /// quarter of the budget; past that, the oldest go before any records.
    private func trim() {
        guard totalCost > memoryLimit else { return }
        let target = memoryLimit / 10 * 9
        let clean = files.values.filter { !$0.isDirty }.sorted { $0.lastUse < $1.lastUse }
        var summaries = clean.reduce(0) { $0 + ($1.isEvicted ? $1.cost : 0) }
        func forget(_ entry: any EngineFile) {
            totalCost -= entry.cost
            entry.forget()
            files[entry.file.path] = nil
        }
        for entry in clean where entry.isEvicted {
            guard totalCost > target, summaries > memoryLimit / 4 else { break }
            summaries -= entry.cost
            forget(entry)
        }
        for entry in clean where !entry.isEvicted {
            guard totalCost > target else { return }
            totalCost -= entry.cost
            entry.evict()
            totalCost += entry.cost
        }
        for entry in clean where files[entry.file.path] != nil {
            guard totalCost > target else { return }
            forget(entry)
        }
    }
}
