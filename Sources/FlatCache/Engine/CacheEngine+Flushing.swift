import Foundation

/// Write-behind: the flush a short while after changes (``CacheEngine/writeDelay``),
/// and the barriers (``CacheEngine/flushNow()``, closing) that wait for it.
extension CacheEngine {
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
        if storage.synchronized { try storage.checkpointJournal() }
        return result
    }

    /// Waits until every change made before the call is on disk (see ``flushNow()``).
    func flush() async throws(FlatCacheError) -> SaveResult {
        try await BlockingWork.run(on: writeQueue) { () throws(FlatCacheError) in try self.flushNow() }
    }

    /// Starts a write-behind flush after ``writeDelay``, unless one is waiting.
    func scheduleFlush() {
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
    func write(_ targets: [any EngineFile], keepingChangesOnFailure: Bool) -> [WriteReport] {
        guard !targets.isEmpty else { return [] }
        do {
            let reports = try storage.withLocks(targets.map(\.file)) { () throws(FlatCacheError) in
                writeLocked(targets, keepingChangesOnFailure: keepingChangesOnFailure)
            }
            // Past its size, the journal is checkpointed now, holding every lock; a failure leaves it for the next.
            if storage.synchronized, storage.journal?.needsCheckpoint == true {
                do {
                    try storage.checkpointJournal()
                } catch {
                    storage.logger.error("FlatCache could not checkpoint its journal; it stays, and is replayed at the next open",
                                         metadata: ["error": "\(error)"])
                }
            }
            return reports
        } catch {
            // The locks could not be taken: nothing was staged, and every change waiting was part of this write.
            let failures = Array(repeating: Result<StagedStep, FlatCacheError>.failure(error), count: targets.count)
            return settle(targets, Slots(failures), dropped: Slots(repeating: 0, count: targets.count),
                          keepingChangesOnFailure: keepingChangesOnFailure, staged: false)
        }
    }
}
