import Foundation

/// The fast path for new records after the last: their lines appended to the
/// file, and the records on disk kept as a prefix of those in memory.
extension CachedFile {
    /// Appends `added` to the file when `base` is known and the rule allows;
    /// with how many records the file held before.
    func stageAppend(
        _ added: (records: [R], lines: [Data]), to base: Base, rule: AppendRule<R>
    ) throws(FlatCacheError) -> (write: RecordFile.StagedWrite, count: Int)? {
        switch base {
        case .unknown, .records(nil, _, _), .records(_, nil, _):
            return nil
        case .records(let records?, let tail?, let ids):
            guard rule.allows(records, added.records, ids: ids), let staged = try Self.append(added.lines, to: file, after: tail)
            else { return nil }
            return (staged, records.count)
        case .end(let count, let last, let ids, let tail):
            guard rule.allows(count: count, last: last, added.records, ids: ids),
                let staged = try Self.append(added.lines, to: file, after: tail)
            else { return nil }
            return (staged, count)
        }
    }

    /// Stages `lines` (new records after the last) at the end of `file`: canonical lines, or, in a
    /// file that has appended lines already (which canonical ones never follow), upsert lines within
    /// the compaction bound (past it, `nil`: the write rewrites the file, which compacts it).
    private static func append(_ lines: [Data], to file: RecordFile, after tail: RecordFile.Tail) throws(FlatCacheError) -> RecordFile.StagedWrite? {
        guard tail.appendedLines > 0 else { return try file.stageAppend(lines, after: tail) }
        guard tail.appendedLines + lines.count
            <= AppendedEdits.compactionBound(canonicalLines: tail.lineCount - tail.appendedLines)
        else { return nil }
        return try file.stageAppend(lines.map { AppendedLine(kind: .upsert, record: $0) }, after: tail)
    }

    /// The records and lines every change adds, when each only adds.
    static func appended(_ changes: [Change<R>]) -> (records: [R], lines: [Data])? {
        var records = [R]()
        var lines = [Data]()
        for change in changes {
            guard let added = change.appended else { return nil }
            records += added.records
            lines += added.lines
        }
        return (records, lines)
    }

    /// After lines were appended: the records on disk are those before and
    /// `added`, kept as a prefix of the view whenever the view holds them.
    func finishAppend(onDiskCount: Int, added: [R], read: [R]?, tail: RecordFile.Tail) {
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
}
