import Foundation

/// Changes made in memory, and the records they leave.
extension CachedFile {
    /// Adds a change; the records in memory follow it at once (a new
    /// record after the last, in place). Engine lock held.
    @_specialize(where R == ChatMessage)
    func add(_ change: Change<R>) {
        let onlyAdds = memoryOnly.isEmpty
        if !onlyAdds {
            // A change that is written ends the memory-only ones.
            memoryOnly = []
            setView(.none, extendsDisk: false)
        }
        pending.append(change)
        func updateCost() { onlyAdds ? self.updateCost(afterAdding: change) : self.updateCost() }
        // Waiting changes hold their records whether or not the file was read: count them.
        guard case .some(var records) = view else { return updateCost() }
        var ids = viewIDs
        // `records` and `ids` now hold the only references (unless the disk shares them): they grow in place.
        (view, viewIDs) = (.none, nil)
        if let rule, let appended = change.appended, records != nil {
            if ids == nil { ids = rule.ids(records!, records!.count) }
            if rule.allows(records!, appended.records, ids: ids) {
                // The view is what was read, no change over it: the records on disk become its prefix, so
                // that a first new record after a load grows them in place instead of copying the channel.
                if viewExtendsDisk, case .known(let onDisk?, let tail?) = disk, onDisk.count == records!.count {
                    disk = .viewPrefix(count: onDisk.count, tail: tail)
                }
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

    /// `changes` applied in order to `records`, the file's records as read
    /// with `tail`: a replace made before another writer changed the file
    /// gets what that writer did carried over it (see ``Change/rebase``).
    @_specialize(where R == ChatMessage)
    static func applying(_ changes: [Change<R>], to records: [R]?, tail: RecordFile.Tail?, dropped: inout Int) -> [R]? {
        changes.reduce(records) { $1.applied(to: $0, current: (records, tail), dropped: &dropped) }
    }
}
