import Foundation

/// The memory tier: its entries, their use and cost, and what leaves it (trim, eviction).
extension CacheEngine {
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
    func entry<R: CacheRecord>(_ file: RecordFile, rule: AppendRule<R>?) -> CachedFile<R> {
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

    /// Marks `entry` used, accounts for its new cost, and trims (unless the caller trims once after several). Lock held.
    func settle(_ entry: any EngineFile, costBefore: Int, trimming: Bool = true) {
        clock += 1
        entry.lastUse = clock
        totalCost += entry.cost - costBefore
        if trimming { trim() }
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
    func trim() {
        guard totalCost > memoryLimit else { return }
        let target = memoryLimit / 10 * 9
        let clean = files.values.filter { !$0.isDirty }
        // Sorted only where the order is needed: the files whose records memory holds (a few dozen),
        // and the summaries (most files, on a large folder) only when they take more than their share.
        // Sorting every file at each trim cost a few percent of a load of 1,000 channels (issue 32).
        let byLastUse = { (first: any EngineFile, second: any EngineFile) in first.lastUse < second.lastUse }
        var summaries = clean.reduce(0) { $0 + ($1.isEvicted ? $1.cost : 0) }
        func forget(_ entry: any EngineFile) {
            totalCost -= entry.cost
            entry.forget()
            files[entry.file.path] = nil
        }
        if totalCost > target, summaries > memoryLimit / 4 {
            for entry in clean.filter(\.isEvicted).sorted(by: byLastUse) {
                guard totalCost > target, summaries > memoryLimit / 4 else { break }
                summaries -= entry.cost
                forget(entry)
            }
        }
        for entry in clean.filter({ !$0.isEvicted }).sorted(by: byLastUse) {
            guard totalCost > target else { return }
            totalCost -= entry.cost
            entry.evict()
            totalCost += entry.cost
        }
        for entry in clean.sorted(by: byLastUse) where files[entry.file.path] != nil {
            guard totalCost > target else { return }
            forget(entry)
        }
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
}
