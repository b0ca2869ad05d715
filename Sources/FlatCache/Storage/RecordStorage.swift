import Foundation
import Logging

/// Typed, locked access to record files: the one place where records become
/// lines and back, where damaged files are moved aside (or, read-only, left
/// in place) and reported, and where a file's lock is held across
/// read-modify-write.
struct RecordStorage: Sendable {
    /// The cache folder's path, for paths reported relative to it.
    let root: String
    /// The folder as the app named it, for errors.
    let directory: URL
    /// The record types this cache reads and writes.
    let recordTypes: RecordTypes
    /// Whether writes `fsync` (``Durability/synchronized``).
    let synchronized: Bool
    /// Whether the cache only reads: every write then throws ``FlatCacheError/readOnlyCache(_:)``.
    let isReadOnly: Bool
    /// Where damaged files go.
    let quarantine: Quarantine
    /// Where damaged files are logged.
    let logger: Logger
    /// Where damaged files are reported to the app.
    let onDamagedFile: (@Sendable (DamagedFile) -> Void)?
    /// One lock per file (striped).
    let locks: LockStripes
    /// What marks a format-1 folder as format 2 at its first write; `nil` for a format-2 folder.
    var formatUpgrade: FormatUpgrade? = nil
    /// The folder's journal, through which a synchronized flush's appends are made durable; `nil` read-only.
    var journal: Journal? = nil

    /// The journal's entry for `staged`, when it is an append the journal makes durable: one to a file
    /// that held bytes before it (an append to an empty file is synced as before).
    func journaled(_ staged: RecordFile.StagedWrite) -> Journal.Append? {
        guard takesJournal(staged), let appended = staged.appended else { return nil }
        return Journal.Append(
            file: relative(staged.file.path), inode: appended.inode, generation: appended.generation,
            offset: appended.offset, before: appended.before, bytes: appended.bytes, after: appended.after)
    }

    /// Whether the journal makes `staged` durable (see ``journaled(_:)``), without building its entry.
    func takesJournal(_ staged: RecordFile.StagedWrite) -> Bool {
        guard journal != nil, synchronized, case .append = staged.kind, let appended = staged.appended else { return false }
        return appended.offset > 0
    }

    /// Checkpoints the journal (``Journal/checkpoint()``) holding every lock; nothing without one.
    func checkpointJournal() throws(FlatCacheError) {
        guard let journal else { return }
        try locks.withAllLocks { () throws(FlatCacheError) in try journal.checkpoint() }
    }

    /// The records in `file`; `[]` when it is missing or damaged (then reported and, unless read-only, moved aside).
    func read<R: CacheRecord>(_ file: RecordFile, as type: R.Type) throws(FlatCacheError) -> [R] {
        try readIfPresent(file, as: type) ?? []
    }

    /// The records in `file`; `nil` when it is missing or damaged (then reported and, unless read-only, moved aside).
    func readIfPresent<R: CacheRecord>(_ file: RecordFile, as type: R.Type) throws(FlatCacheError) -> [R]? {
        try withLock(file) { () throws(FlatCacheError) in try readLocked(file, as: type) }
    }

    /// Makes `records` the whole content of `file`, skipping the write when nothing changed.
    func replace<R: CacheRecord>(_ file: RecordFile, with records: [R]) throws(FlatCacheError) -> RecordFile.WriteOutcome {
        try requireWritable()
        let lines = try serialize(records)
        return try withLock(file) { () throws(FlatCacheError) in try writeLocked(file, lines) }
    }

    /// Makes `records` the whole content of `file` when `provided`, asked holding
    /// the file's lock, says so; `nil` when it did not.
    func replace<R: CacheRecord>(
        _ file: RecordFile, with records: [R], provided: () throws(FlatCacheError) -> Bool
    ) throws(FlatCacheError) -> RecordFile.WriteOutcome? {
        try requireWritable()
        let lines = try serialize(records)
        return try withLock(file) { () throws(FlatCacheError) in try provided() ? try writeLocked(file, lines) : nil }
    }

    /// Reads `file`, hands its records to `transform` and writes what it returns,
    /// all under the file's lock so that concurrent updates never interleave.
    ///
    /// - Parameter creating: Whether a missing (or damaged) file is written when
    ///   `transform` returns no records. `false` for changes that only take
    ///   away (a change log, a removal): they leave "never cached" as it is
    ///   rather than make it "cached as empty".
    /// - Returns: What the write did; `nil` when nothing was written.
    func update<R: CacheRecord>(
        _ file: RecordFile, as type: R.Type, creating: Bool = true,
        _ transform: ([R]) throws(FlatCacheError) -> [R]
    ) throws(FlatCacheError) -> RecordFile.WriteOutcome? {
        try requireWritable()
        return try withLock(file) { () throws(FlatCacheError) in
            let cached = try readLocked(file, as: type)
            let updated = try transform(cached ?? [])
            if cached == nil && updated.isEmpty && !creating { return nil }
            return try writeLocked(file, try serialize(updated))
        }
    }

    /// What `file` holds, checked like a load but moving nothing: `nil` when
    /// it does not exist, else what `count` makes of its lines (a record
    /// count) or why it cannot be trusted, and the bytes an unfinished append
    /// left after them.
    ///
    /// - Parameters:
    ///   - finishing: Whether to finish what a crash cut short (`verify`'s
    ///     repair): rename a waiting sidecar, cut off an unfinished append.
    ///     Without it a check changes nothing.
    ///   - typed: Whether `count` decodes this cache's record types, so that a
    ///     record that will not decode may mean another instance migrated the folder.
    /// Call holding the lock its readers hold (its own, or that of the file it describes).
    func inspectLocked(
        _ file: RecordFile, finishing: Bool = false, typed: Bool = true,
        count: (FileLines) throws(Corruption) -> Int
    ) throws(FlatCacheError) -> (result: Result<Int, Corruption>, unfinishedBytes: Int)? {
        let (found, _, unfinished) = try file.check(finishing: finishing && !isReadOnly)
        switch found {
        case .missing: return nil
        case .corrupt(let corruption): return (.failure(corruption), 0)
        case .body(let body):
            do throws(Corruption) {
                return (.success(try count(try RecordLines.decode(body, sealer: file.sealer, fileName: file.name))), unfinished)
            } catch {
                if typed, case .undecodableRecord = error { try requireRecordTypes() }
                return (.failure(error), unfinished)
            }
        }
    }

    /// Each line decoded as an `R`, for ``inspectLocked(_:finishing:typed:count:)``.
    func count<R: CacheRecord>(_ lines: FileLines, as type: R.Type) throws(Corruption) -> Int {
        try decode(lines, as: type).count
    }

    /// Reports `file` as damaged and, when `moving` and not read-only, moves it aside as a load does.
    ///
    /// - Returns: Where it was moved, inside the cache folder; `nil` when left in place.
    func isolate(_ file: RecordFile, because corruption: Corruption, moving: Bool) throws(FlatCacheError) -> String? {
        try withLock(file) { () throws(FlatCacheError) in try isolateLocked(file, because: corruption, moving: moving) }
    }

    /// ``isolate(_:because:moving:)`` for a caller already holding `file`'s
    /// lock, or every lock (a key change): the stripes do not nest.
    func isolateLocked(_ file: RecordFile, because corruption: Corruption, moving: Bool) throws(FlatCacheError) -> String? {
        try report(file, corruption, moving: moving)
    }

    /// Removes `file` and its sidecar.
    func remove(_ file: RecordFile) throws(FlatCacheError) {
        try requireWritable()
        try withLock(file) { () throws(FlatCacheError) in try file.remove() }
    }

    /// Throws ``FlatCacheError/readOnlyCache(_:)`` when the cache only reads.
    func requireWritable() throws(FlatCacheError) {
        if isReadOnly { throw .readOnlyCache(directory) }
    }

    /// Marks a format-1 folder as format 2 (``FormatUpgrade``), once: what every write of records does first.
    func upgradeFormat() throws(FlatCacheError) {
        try formatUpgrade?.run()
    }

    /// Throws ``FlatCacheError/recordTypeMismatch(directory:cached:requested:)``
    /// when the folder now names other record types than this cache's: it was
    /// migrated or erased by another instance since this one opened it. Called
    /// when a record does not decode, before the file is taken for damaged.
    private func requireRecordTypes() throws(FlatCacheError) {
        if let cached = try RecordTypesFile.read(at: root + "/records"), cached != recordTypes {
            throw .recordTypeMismatch(directory: directory, cached: cached, requested: recordTypes)
        }
    }

    /// Whether the folder's `records` file names this cache's record types,
    /// or there is none: `false` when it names others (another instance
    /// migrated the folder) or cannot be read. For a write that appends
    /// lines to a file it has not decoded (``CachedFile/stageColdEdits(_:rule:storage:)``).
    func recordTypesMatch() -> Bool {
        do throws(FlatCacheError) {
            guard let cached = try RecordTypesFile.read(at: root + "/records") else { return true }
            return cached == recordTypes
        } catch {
            return false
        }
    }

    /// `path` relative to the cache folder, as reports name files.
    func relative(_ path: String) -> String {
        path.hasPrefix(root + "/") ? String(path.dropFirst(root.count + 1)) : path
    }

    // MARK: - Helpers

    /// Runs `body` holding `file`'s lock.
    func withLock<T>(_ file: RecordFile, _ body: () throws(FlatCacheError) -> T) throws(FlatCacheError) -> T {
        try locks.withLock(for: file.path, shared: isReadOnly, body)
    }

    /// Runs `body` holding the locks of `files`: one file's, or every lock for several.
    func withLocks<T>(_ files: [RecordFile], _ body: () throws(FlatCacheError) -> T) throws(FlatCacheError) -> T {
        if files.count == 1 { return try withLock(files[0], body) }
        return try locks.withAllLocks(body)
    }

    private func readLocked<R: CacheRecord>(_ file: RecordFile, as type: R.Type) throws(FlatCacheError) -> [R]? {
        try loadLocked(file, as: type).records
    }

    /// The records in `file` and its tail; `nil` records when it is missing or
    /// damaged (then reported and, unless read-only, moved aside). Call with its lock held.
    func loadLocked<R: CacheRecord>(
        _ file: RecordFile, as type: R.Type
    ) throws(FlatCacheError) -> (records: [R]?, tail: RecordFile.Tail?, bytes: Int) {
        let corruption: Corruption
        let (contents, tail) = try file.load(finishing: !isReadOnly)
        switch contents {
        case .missing:
            return (nil, nil, 0)
        case .records(let lines):
            do throws(Corruption) {
                let bytes = lines.records.reduce(0) { $0 + $1.count } + lines.appended.reduce(0) { $0 + $1.record.count }
                return (try decode(lines, as: type), tail, bytes)
            } catch {
                try requireRecordTypes()
                corruption = error
            }
        case .corrupt(let found):
            corruption = found
        }
        _ = try report(file, corruption)
        return (nil, nil, 0)
    }

    /// The records `snapshot` of `file` held (see ``RecordFile/lines(in:)``);
    /// `nil` when there was no file or it could not be trusted. Reports and moves nothing:
    /// the file has been replaced by the time anyone asks.
    func records<R: CacheRecord>(in snapshot: RecordFile.Snapshot, of file: RecordFile, as type: R.Type) -> [R]? {
        guard let lines = file.lines(in: snapshot) else { return nil }
        return try? decode(lines, as: type)
    }

    /// Whether `path` holds a regular file or nothing: what a write may replace.
    private static func isFileOrMissing(_ path: String) throws(FlatCacheError) -> Bool {
        switch try FileSystem.entry(at: path) {
        case .missing, .file: true
        case .directory, .other: false
        }
    }

    /// Stages a whole-file write of `lines` (see ``RecordFile/stageReplace(_:)``). A folder,
    /// link or device standing where the file, its sidecar or their temporary
    /// files belong is moved aside like a damaged file, and the write tried again.
    func stageReplace(_ file: RecordFile, _ lines: [Data]) throws(FlatCacheError) -> RecordFile.StagedWrite {
        // A folder where the file or its sidecar belongs would fail the rename at commit: move it now.
        for path in [file.path, file.sidecarPath] where try !Self.isFileOrMissing(path) {
            _ = try report(file, .notARegularFile)
            break
        }
        do {
            return try file.stageReplace(lines)
        } catch where FileSystem.isNotARegularFile(error) {
            _ = try report(file, .notARegularFile)
            return try file.stageReplace(lines)
        }
    }

    /// Writes `lines` into `file`. A folder, link or device standing where the
    /// file, its sidecar or their temporary files belong would make every write
    /// fail; it is moved aside like a damaged file, and the write tried again.
    private func writeLocked(_ file: RecordFile, _ lines: [Data]) throws(FlatCacheError) -> RecordFile.WriteOutcome {
        try upgradeFormat()
        do {
            return try file.write(lines, synchronized: synchronized)
        } catch where FileSystem.isNotARegularFile(error) {
            _ = try report(file, .notARegularFile)
            return try file.write(lines, synchronized: synchronized)
        }
    }

    /// Tells the app about a damaged `file` and moves it aside when `moving`
    /// (never read-only). A load (`moving`, or read-only) also logs it; a
    /// verify that only checks reports through its result instead.
    private func report(_ file: RecordFile, _ corruption: Corruption, moving: Bool = true) throws(FlatCacheError) -> String? {
        let movedTo = moving && !isReadOnly ? relative(try quarantine.isolate(file)) : nil
        if moving {
            logger.warning(
                movedTo == nil
                    ? "FlatCache found a damaged file in a read-only cache and treats it as a cache miss"
                    : "FlatCache moved a damaged file aside and treats it as a cache miss",
                metadata: ["file": "\(file.path)", "reason": "\(corruption)", "movedTo": "\(movedTo ?? "")"])
        }
        onDamagedFile?(DamagedFile(path: relative(file.path), problem: corruption.description, movedTo: movedTo))
        return movedTo
    }

    /// The records `lines` hold: each canonical line decoded as an `R`, then
    /// the appended lines applied (``AppendedMerge``).
    func decode<R: CacheRecord>(_ lines: FileLines, as type: R.Type) throws(Corruption) -> [R] {
        let records = try decode(lines.records, as: type)
        guard !lines.appended.isEmpty else { return records }
        var appended = [AppendedMerge.Line<R>]()
        appended.reserveCapacity(lines.appended.count)
        for (index, line) in lines.appended.enumerated() {
            let number = records.count + index + 1
            guard line.kind == .upsert else {
                appended.append(.deletion(line.record, line: number))
                continue
            }
            do {
                appended.append(.upsert(try R(serializedData: line.record)))
            } catch {
                throw .undecodableRecord(line: number, reason: "\(error)")
            }
        }
        return try AppendedMerge.records(records, appended: appended)
    }

    private func decode<R: CacheRecord>(_ lines: [Data], as type: R.Type) throws(Corruption) -> [R] {
        var records = [R]()
        records.reserveCapacity(lines.count)
        for (index, line) in lines.enumerated() {
            do {
                records.append(try R(serializedData: line))
            } catch {
                throw .undecodableRecord(line: index + 1, reason: "\(error)")
            }
        }
        return records
    }

    /// Each record's bytes, or ``FlatCacheError/serializationFailed(recordType:underlying:)``.
    /// Built-in messages share one buffer (see ``ChatMessage/serialize(_:)``).
    func serialize<R: CacheRecord>(_ records: [R]) throws(FlatCacheError) -> [Data] {
        do {
            // By type, not `as?`: casting an array checks (and copies) every element.
            if R.self == ChatMessage.self { return try ChatMessage.serialize(unsafeBitCast(records, to: [ChatMessage].self)) }
            return try records.map { try $0.serialize() }
        } catch {
            throw .serializationFailed(recordType: String(describing: R.self), underlying: error)
        }
    }
}
