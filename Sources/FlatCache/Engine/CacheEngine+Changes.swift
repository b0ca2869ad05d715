import Foundation

/// Saves and removals: changes go to memory at once and are written by a flush,
/// or written at once for the synchronous API and ``CacheTier/disk``.
extension CacheEngine {
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
        let entry = addLocked(change, to: file, rule: rule)
        hub.changed(file.path)
        if writeDelay > .zero { scheduleFlush() }
        return entry
    }

    /// Adds `change` to `file`'s entry in memory, under the engine's lock, and accounts its cost.
    private func addLocked<R: CacheRecord>(_ change: Change<R>, to file: RecordFile, rule: AppendRule<R>?) -> CachedFile<R> {
        locked {
            let entry = self.entry(file, rule: rule)
            let before = entry.cost
            entry.add(change)
            settle(entry, costBefore: before)
            return entry
        }
    }

    /// Adds `change`, which replaces the records of `file`, in memory with
    /// what the file holds now as its ``Change/base``, and schedules its
    /// write: the write then carries over it what other writers (instances,
    /// processes) wrote to the file in between, as if it had been written now.
    ///
    /// The base comes from memory when it knows the file and the `stat`s of
    /// the file and its sidecar show them unchanged; else the file's bytes are read on ``readQueue``,
    /// holding its lock (so that no write comes in between), and kept as they
    /// are: they are checked and decoded only when the write finds the file
    /// changed since, so a replace of a channel memory does not hold costs a
    /// copy from the page cache, not a load (issue 32).
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
                    let snapshot = try file.snapshot()
                    let base = Change<R>.Base(stamps: snapshot.stamps, records: { [storage = self.storage] in
                        storage.records(in: snapshot, of: file, as: R.self)
                    })
                    self.locked {
                        let entry = self.entry(file, rule: rule)
                        self.add(change, base: base, to: entry, costBefore: entry.cost)
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
            let entry = addLocked(change, to: file, rule: rule)
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
}
