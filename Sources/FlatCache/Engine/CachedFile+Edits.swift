import Foundation

/// Format 2's way for edits and deletions: their lines appended after the
/// file's, instead of the channel rewritten (docs/format.md, "Appended lines").
extension CachedFile {
    /// Appends the lines of `changes` to the file holding `onDisk` (as read
    /// with `tail`), when each change can say them (``Change/edit``), none
    /// leaves a record out by retention, and the file stays within its
    /// `capacity` (a message file's limit plus slack) and
    /// ``AppendedEdits/compactionBound(canonicalLines:)``;
    /// `nil` (nothing written) otherwise: the file is then rewritten
    /// canonically, which is also what compacts it.
    func stageEdits(
        _ changes: ArraySlice<Change<R>>, onDisk: [R], read: Bool, tail: RecordFile.Tail, capacity: Int, limit: Int
    ) throws(FlatCacheError) -> RecordFile.StagedWrite? {
        if changes.count == 1, let change = changes.first, let applyInPlace = change.applyInPlace {
            return try stageEdit(change, applyInPlace, onDisk: onDisk, read: read, tail: tail, capacity: capacity, limit: limit)
        }
        var records = onDisk
        var lines = [AppendedLine]()
        for change in changes {
            guard let edit = change.edit, let found = edit(records) else { return nil }
            var dropped = 0
            guard let next = change.applied(to: records, current: nil, dropped: &dropped), dropped == 0 else { return nil }
            lines += found.lines
            records = next
        }
        if lines.isEmpty {
            // Every change found its records on disk as they are: nothing to write.
            (installing, installingIsFile) = ((records, 0), true)
            return RecordFile.StagedWrite(file: file, kind: .unchanged, tail: tail)
        }
        let canonical = tail.lineCount - tail.appendedLines
        guard records.count <= capacity,
            tail.appendedLines + lines.count <= AppendedEdits.compactionBound(canonicalLines: canonical),
            let staged = try file.stageAppend(lines, after: tail)
        else { return nil }
        installing = (records, 0)
        installingIsFile = true
        return staged
    }

    /// ``stageEdits(_:onDisk:read:tail:capacity:limit:)`` for one change that can
    /// apply itself in place (``Change/applyInPlace``): its lines are appended
    /// when the count it leaves (``Change/edit``) is within `limit` and
    /// `capacity`, and the records it leaves are not worked out here: memory
    /// changes its records in place once the write lands (``finish(tail:)``),
    /// to the records read here (`read`), or to memory's when they are still
    /// the records the lines were appended after (memory may know an older
    /// file than the one the write found, which another writer changed).
    /// A change log into a channel of 100 messages then copies none of them,
    /// nor releases the old ones (issue 33: that was a third of its flush).
    private func stageEdit(
        _ change: Change<R>, _ applyInPlace: @escaping @Sendable (inout [R]) -> Void,
        onDisk: [R], read: Bool, tail: RecordFile.Tail, capacity: Int, limit: Int
    ) throws(FlatCacheError) -> RecordFile.StagedWrite? {
        // Retention leaving a record out (the file shows fewer than it holds, or the change adds past the
        // limit) takes the rewrite, which counts what it drops.
        guard let edit = change.edit, onDisk.count <= limit, let found = edit(onDisk), found.count <= limit else { return nil }
        if found.lines.isEmpty {
            // Every record the change names is on disk as it says: nothing to write.
            (installing, installingIsFile) = ((onDisk, 0), true)
            return RecordFile.StagedWrite(file: file, kind: .unchanged, tail: tail)
        }
        let canonical = tail.lineCount - tail.appendedLines
        guard found.count <= capacity,
            tail.appendedLines + found.lines.count <= AppendedEdits.compactionBound(canonicalLines: canonical),
            let staged = try file.stageAppend(found.lines, after: tail)
        else { return nil }
        // Records read here are kept for memory; memory's own are not referenced twice (a second
        // reference would make the change copy them).
        installingInPlace = (applyInPlace, tail.stamp, read ? onDisk : nil)
        return staged
    }
}

extension CachedFile {
    /// Appends the lines of `changes` (``Change/blindEdit``) to a file memory
    /// keeps only the end of (`count` records at most, the last `last`, read
    /// or written with `tail`), without reading it: when every change has
    /// them, the file can take as many more records as they add without
    /// passing the retention limit (so retention leaves nothing out and shows
    /// nothing it had left out), and the lines stay within the compaction bound.
    /// `nil` (nothing written) otherwise: the file is then read.
    func stageBlindEdits(
        _ changes: [Change<R>], count: Int, last: R?, tail: RecordFile.Tail, rule: AppendRule<R>
    ) throws(FlatCacheError) -> RecordFile.StagedWrite? {
        var lines = [AppendedLine]()
        var adds = 0
        for change in changes {
            guard !change.replacesAll, let blind = change.blindEdit else { return nil }
            lines += blind.lines
            adds += blind.adds
        }
        lines = AppendedEdits.lastOfEach(lines)
        let canonical = tail.lineCount - tail.appendedLines
        guard !lines.isEmpty, count <= rule.limit - adds,
            tail.appendedLines + lines.count <= AppendedEdits.compactionBound(canonicalLines: canonical),
            let staged = try file.stageAppend(lines, after: tail)
        else { return nil }
        appendingBlind = (count + adds, last)
        return staged
    }
}

extension CachedFile {
    /// Appends the lines of `changes` (``Change/blindEdit``) to a file memory
    /// knows nothing of (never read, or forgotten), having read its bytes and
    /// checked them against the sidecar, but decoded none of its lines: the
    /// check gives the tail the append goes on from, and its line count
    /// bounds the records the file holds, for the retention limit. A change
    /// log reaching channels the app has not opened since launch costs a
    /// read and a digest per channel, not a decode of every record (issue 33).
    /// `nil` (nothing written) when a change has no lines of its own, the
    /// file is sealed, missing or damaged (the full read reports it), the
    /// bytes may already say one of the lines (a change log applied twice
    /// writes nothing the second time: the full read tells), or the lines
    /// would pass the limit or the compaction bound. The sidecar proves the
    /// bytes, not that they decode: a body that does not end its last line,
    /// and a folder whose `records` file names other types (migrated by
    /// another instance), take the full read too, which reports what it finds
    /// instead of lines being appended to a file that will not read.
    ///
    /// The file then has appended lines, so memory keeps a summary without a
    /// last record: new records take appended lines, which need none.
    func stageColdEdits(
        _ changes: [Change<R>], rule: AppendRule<R>, storage: RecordStorage
    ) throws(FlatCacheError) -> RecordFile.StagedWrite? {
        // Sealed lines differ at every sealing: only a plain file's bytes can be searched for them.
        guard file.sealer == nil, changes.allSatisfy({ !$0.replacesAll && $0.blindEdit != nil }) else { return nil }
        let (found, tail) = try file.verify(finishing: !storage.isReadOnly)
        // The retention bound first (a channel at its limit takes the full read): the cheapest check.
        let adds = changes.reduce(0) { $0 + ($1.blindEdit?.adds ?? 0) }
        guard case .body(let body) = found, let tail, tail.lineCount <= rule.limit - adds,
            body.isEmpty || body.last == RecordLines.newline,
            !RecordLines.mayHold(changes.flatMap { $0.blindEdit?.lines ?? [] }, in: body), storage.recordTypesMatch()
        else { return nil }
        // Every line is a record at most (an appended one may replace or delete another).
        return try stageBlindEdits(changes, count: tail.lineCount, last: nil, tail: tail, rule: rule)
    }
}

/// When a message file's appended lines are folded back into canonical ones.
enum AppendedEdits {
    /// `lines` with each line that comes again later left out (the same
    /// message saved twice before a write): for each key the last line wins,
    /// so a line said again later changes nothing where it was.
    static func lastOfEach(_ lines: [AppendedLine]) -> [AppendedLine] {
        guard lines.count > 1 else { return lines }
        var later = Set<AppendedLine>()
        var kept = [AppendedLine]()
        for line in lines.reversed() where later.insert(line).inserted { kept.append(line) }
        return kept.count == lines.count ? lines : kept.reversed()
    }

    /// The most appended lines a file of `canonicalLines` canonical lines
    /// keeps before a write rewrites it canonically (compaction): a quarter
    /// of its canonical lines, and never fewer than 16. A read of a file with
    /// appended lines decodes all of it and applies them by key, and its
    /// bytes grow by a line per edit: the bound keeps both within a quarter
    /// of the file, while 16 lets a small channel take two or three change
    /// logs between rewrites. (Not yet tuned by measurement: issue 33.)
    static func compactionBound(canonicalLines: Int) -> Int {
        max(16, canonicalLines / 4)
    }
}
