import Foundation

/// How a flush writes its files together: staged, synchronized, committed,
/// and then what memory knows of each settled.
extension CacheEngine {
    /// Writes the waiting changes of `targets` together: every file staged,
    /// then (synchronized) all synced at once, then all committed, then the
    /// commits synced; each file either lands or keeps its old content. Then
    /// memory learns what is on disk, still under the files' locks, so that
    /// no read or write of them comes in between. Call holding their locks.
    func writeLocked(_ targets: [any EngineFile], keepingChangesOnFailure: Bool) -> [WriteReport] {
        do {
            try storage.upgradeFormat()
        } catch {
            // Nothing was staged: every change waits, as when the files' locks cannot be taken.
            let failures = Array(repeating: Result<StagedStep, FlatCacheError>.failure(error), count: targets.count)
            return settle(targets, Slots(failures), dropped: Slots(repeating: 0, count: targets.count),
                          keepingChangesOnFailure: keepingChangesOnFailure, staged: false)
        }
        let steps = Slots<Result<StagedStep, FlatCacheError>>(repeating: .success(.noChanges), count: targets.count)
        let dropped = Slots(repeating: 0, count: targets.count)
        let cores = BlockingWork.processorCount
        BlockingWork.forEach(targets.count, width: targets.count >= 8 ? cores : 1) { index in
            steps[index] = Result { () throws(FlatCacheError) in try targets[index].stage(in: self) }
            dropped[index] = targets[index].droppedInWrite
        }
        if storage.synchronized {
            synchronizeStaged(steps)
            journal(steps)
        }
        commit(steps, files: targets.map(\.file))
        if storage.synchronized { synchronizeCommitted(steps) }
        return settle(targets, steps, dropped: dropped, keepingChangesOnFailure: keepingChangesOnFailure, staged: true)
    }

    /// Tells each target what its write did, and reports it.
    func settle(
        _ targets: [any EngineFile], _ steps: Slots<Result<StagedStep, FlatCacheError>>, dropped: Slots<Int>,
        keepingChangesOnFailure: Bool, staged: Bool
    ) -> [WriteReport] {
        var written = 0
        var stamps = [(name: String, stamp: FileStamp)]()
        var changed = [String]()
        // What appends said, for the search index: worked out only when one follows every file.
        var appended = [String: AppendedWrite]()
        let followed = hub.isFollowedWhole
        let reports = locked {
            var reports = [WriteReport]()
            for (index, target) in targets.enumerated() {
                let before = target.cost
                let outcome: Result<RecordFile.WriteOutcome?, FlatCacheError>
                switch steps[index] {
                case .success(.write(let staged)):
                    if followed, let write = target.appendedWrite(staged) { appended[target.file.path] = write }
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
                // One trim after the loop: a trim per file sorted every file for each one written (issue 32).
                settle(target, costBefore: before, trimming: false)
                reports.append(WriteReport(file: target.file, outcome: outcome, dropped: dropped[index]))
            }
            trim()
            return reports
        }
        if !stamps.isEmpty { policy.usage.wrote(stamps) }
        // On disk now: what other instances on the folder read (this one knew it from memory).
        hub.changed(changed, appended: appended)
        if policy.wrote(bytes: written) { writeQueue.async { [self] in sweeper(self) } }
        return reports
    }

    /// Syncs what the staged writes put in temporary files, and the appends the journal does not take.
    private func synchronizeStaged(_ steps: Slots<Result<StagedStep, FlatCacheError>>) {
        // Only those that have something to sync: a flush whose appends the journal takes fans out to no one.
        let syncing = steps.all.indices.filter { index in
            guard case .success(.write(let staged)) = steps[index] else { return false }
            if case .unchanged = staged.kind { return false }
            return !storage.takesJournal(staged)
        }
        BlockingWork.forEach(syncing.count, width: 8) { job in
            let index = syncing[job]
            guard case .success(.write(let staged)) = steps[index] else { return }
            do throws(FlatCacheError) {
                try staged.file.synchronize(staged)
            } catch {
                staged.file.discard(staged)
                steps[index] = .failure(error)
            }
        }
    }

    /// Puts every staged file in place. Files are independent (each commits
    /// on its own), so a flush of many commits them on every core, as it stages them.
    private func commit(_ steps: Slots<Result<StagedStep, FlatCacheError>>, files: [RecordFile]) {
        let count = files.count
        BlockingWork.forEach(count, width: count >= 8 ? BlockingWork.processorCount : 1) { index in
            do throws(FlatCacheError) {
                switch steps[index] {
                case .success(.write(var staged)):
                    try staged.file.commit(&staged)
                    steps[index] = .success(.write(staged))
                case .success(.remove):
                    try files[index].remove()
                default:
                    return
                }
            } catch {
                steps[index] = .failure(error)
            }
        }
    }

    /// Makes the staged appends durable with one journal entry and one `fsync`
    /// (group commit, ``Journal``), before any of their sidecars is written.
    /// When the journal cannot be written, those appends fail: their lines
    /// stay unconfirmed, as an append cut short leaves them.
    private func journal(_ steps: Slots<Result<StagedStep, FlatCacheError>>) {
        guard let journal = storage.journal else { return }
        var indices = [Int]()
        var appends = [Journal.Append]()
        for (index, step) in steps.all.enumerated() {
            guard case .success(.write(let staged)) = step, let append = storage.journaled(staged) else { continue }
            indices.append(index)
            appends.append(append)
        }
        do throws(FlatCacheError) {
            try journal.record(appends)
        } catch {
            for index in indices { steps[index] = .failure(error) }
        }
    }

    /// Syncs the sidecars appends wrote in place (those the journal did not take), and once each
    /// folder where files were renamed.
    private func synchronizeCommitted(_ steps: Slots<Result<StagedStep, FlatCacheError>>) {
        var folders = [String: [Int]]()
        var sidecars = [Int]()
        for (index, step) in steps.all.enumerated() {
            guard case .success(.write(let staged)) = step else { continue }
            switch staged.kind {
            case .unchanged: break
            case .append: if !storage.takesJournal(staged) { sidecars.append(index) }
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
}
