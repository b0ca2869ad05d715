import Foundation

/// One change a store made to a file, kept in memory until it is written.
///
/// Changes are kept as what they do, not as the content they produce, so
/// that a write applies them to what is on disk at that moment: saves by
/// another process in between are kept, not overwritten.
struct Change<R: CacheRecord>: Sendable {
    /// The file's records after the change, given those before (`nil`: no
    /// file); counts into `dropped` the records retention left out.
    let apply: @Sendable (_ records: [R]?, _ dropped: inout Int) -> [R]?
    /// When the change only adds records, these (in file order) and their
    /// serialized bytes: a write may then append their lines instead of
    /// rewriting the file, when ``AppendRule`` allows.
    var appended: (records: [R], lines: [Data])?
    /// When the change edits or deletes records (format 2): the lines that,
    /// appended to a file holding `records`, make it read as the change's
    /// result; `nil` when the change must rewrite the file. A write appends
    /// them instead of rewriting the channel when the change leaves out
    /// nothing by retention (``CachedFile/stageEdits(_:onDisk:read:tail:capacity:limit:)``).
    var edit: (@Sendable (_ records: [R]) -> (lines: [AppendedLine], count: Int)?)?
    /// ``apply`` done to the records in place, for a change that retention
    /// leaves nothing out of (the caller checks, with the count ``edit``
    /// gives), and that counts nothing into `dropped`: a write that appended
    /// the change's lines gives memory the records after it by changing
    /// only the records it names, not by a copy of the channel (issue 33).
    var applyInPlace: (@Sendable (_ records: inout [R]) -> Void)?
    /// The same change's lines for a file whose records memory no longer
    /// holds (evicted): every upsert's line, whether or not the file holds
    /// that record already, and a deletion line for every id; with how many
    /// records the change may add at most (its upserts). A write appends
    /// them without reading the file when that many more still fit under
    /// the retention limit (then retention leaves nothing out, whatever the
    /// file holds): a change log costs the size of its changes, not of the channel.
    var blindEdit: (lines: [AppendedLine], adds: Int)?
    /// What the change's lines say, as records: its upserts in the order of
    /// their lines, then the ids' bytes its deletions name (``MessageIDBytes``).
    /// Set for message changes with ``blindEdit``: a follower of every file
    /// (the search index) learns a write that appended them from these,
    /// instead of reading the channel again (``AppendedWrite``).
    var lineRecords: (upserts: [R], deletions: [Data])?
    /// When the change replaces everything with records worked out as it
    /// was made (``apply`` returns them whatever it is given): their bytes,
    /// serialized then, so that a write of them as they are (not rebased over
    /// another writer's saves) does not serialize every record a second time.
    var replacementLines: [Data]?
    /// Whether the change ignores the records before it (a replace, a
    /// removal): then a write need not read the file.
    var replacesAll = false
    /// Set by ``apply`` when what the file's attachment says no longer holds
    /// of the result (retention dropped a message the change brought): the
    /// write then removes the attachment first.
    var voidsAttachment: Flag?
    /// For a change that replaces everything: how to carry what other
    /// writers did to the file after the change was made over its result
    /// (`result`, given the file's records then and now), so that a replace
    /// waiting for write-behind keeps their saves as a synchronous replace
    /// followed by them would. `nil`: the result is written as it is.
    var rebase: (@Sendable (_ result: [R]?, _ then: [R]?, _ now: [R]?, _ dropped: inout Int) -> [R]?)?
    /// What the file held when the change was made (set by the engine for
    /// an `async` save; `nil` for a synchronous one, written at once).
    var base: Base?

    /// A file as a change found it: the stamps of the data file and its
    /// sidecar (data `nil`: no file), and its records then, worked out only
    /// when a write finds the file changed since (another writer came in
    /// between), so that the usual write, which finds it as it was, never
    /// decodes it.
    struct Base: Sendable {
        let stamps: (data: FileStamp?, sidecar: FileStamp?)
        /// The records then: `nil` for no file, or one that could not be trusted.
        let records: @Sendable () -> [R]?
    }

    /// The records after the change, given those before it and the file's
    /// records as read now with their tail (`current`, `nil` when not read:
    /// unchanged since ``base``). Counts into `dropped` what retention left out.
    func applied(to records: [R]?, current: (records: [R]?, tail: RecordFile.Tail?)?, dropped: inout Int) -> [R]? {
        let result = apply(records, &dropped)
        guard let rebase, let base, let current, rebases(over: current) else { return result }
        return rebase(result, base.records(), current.records, &dropped)
    }

    /// Whether ``applied(to:current:dropped:)`` carries what another writer
    /// did over the result, given the file as read now (`current`, `nil`
    /// when not read): it has a ``rebase`` and a ``base`` the file no longer is.
    func rebases(over current: (records: [R]?, tail: RecordFile.Tail?)?) -> Bool {
        guard rebase != nil, let base, let current else { return false }
        return !Self.same(base, current)
    }

    /// Whether `base` and `current` are the same file, by its stamps.
    private static func same(_ base: Base, _ current: (records: [R]?, tail: RecordFile.Tail?)) -> Bool {
        guard base.stamps.data != nil else { return current.records == nil }
        guard current.records != nil, let now = current.tail else { return false }
        return base.stamps.data == now.stamp && base.stamps.sidecar == now.sidecarStamp
    }

    /// Whether a write that finds the file with `stamps` must read it to apply ``rebase``.
    func needsFile(_ stamps: (data: FileStamp?, sidecar: FileStamp?)) -> Bool {
        guard rebase != nil, let base else { return false }
        guard base.stamps.data != nil else { return stamps.data != nil }
        return base.stamps.data != stamps.data || base.stamps.sidecar != stamps.sidecar
    }

    /// A flag that closures set from any thread.
    typealias Flag = FlatCache.Flag
}

/// When the lines of new records may be appended to a file instead of the
/// file being rewritten: the store's rule (for messages, newer than every
/// cached one, no id seen before, and room left under the retention slack).
struct AppendRule<R: CacheRecord>: Sendable {
    /// The most records a file may hold after an append (the limit plus its slack).
    let capacity: Int
    /// The retention limit: how many records a load shows.
    var limit = Int.max
    /// A key for the record's id, unique within a file: equal ids give equal
    /// keys. For messages it is the id's hash, so two ids may share a key;
    /// that only makes an append look like a repeat and take the exact path.
    let id: @Sendable (R) -> Int64
    /// The ``id`` keys of the first `count` of `records`, read in place:
    /// calling ``id`` on each copies the record (retaining its strings) to pass it.
    let ids: @Sendable (_ records: [R], _ count: Int) -> Set<Int64>
    /// Whether the first record sorts strictly before the second.
    let precedes: @Sendable (R, R) -> Bool

    /// Whether `new`, in this order, may follow `existing` (a file's records,
    /// in file order). `ids`, when given, are the ids of `existing`: the check
    /// then costs the size of `new`, not of the file.
    @_specialize(where R == ChatMessage)
    func allows(_ existing: [R], _ new: [R], ids: Set<Int64>? = nil) -> Bool {
        if let ids { return allows(count: existing.count, last: existing.last, new, ids: ids) }
        guard let newIDs = orderedIDs(new, after: existing.last, count: existing.count) else { return false }
        // Indexing, not iterating: an iterator would copy every record to read its id.
        if newIDs.count == 1 {
            let only = newIDs[0]
            for index in existing.indices where id(existing[index]) == only { return false }
            return true
        }
        let lookup = Set(newIDs)
        for index in existing.indices where lookup.contains(id(existing[index])) { return false }
        return true
    }

    /// Whether `new` may follow a file's `count` records, the last of them
    /// `last`, whose ids are `ids`: costs the size of `new` alone.
    @_specialize(where R == ChatMessage)
    func allows(count: Int, last: R?, _ new: [R], ids: Set<Int64>) -> Bool {
        guard let newIDs = orderedIDs(new, after: last, count: count) else { return false }
        return !newIDs.contains(where: ids.contains)
    }

    /// The ids of `new` when it fits after `count` records ending with
    /// `last`: room under the capacity, each record after the one before,
    /// no id twice; `nil` otherwise.
    private func orderedIDs(_ new: [R], after last: R?, count: Int) -> [Int64]? {
        guard count + new.count <= capacity, let first = new.first else { return nil }
        if let last, !precedes(last, first) { return nil }
        for index in new.indices.dropFirst() where !precedes(new[index - 1], new[index]) { return nil }
        // In strict order, no two new records share a sort position; ids may still repeat.
        let newIDs = new.count == 1 ? [id(first)] : new.map(id)
        if newIDs.count > 1, Set(newIDs).count != newIDs.count { return nil }
        return newIDs
    }
}
