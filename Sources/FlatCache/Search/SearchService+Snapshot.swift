import Foundation

/// The search index saved in `search.lines` (``SearchSnapshot``): read once
/// when search starts, written when the build is done and after many changes.
extension SearchService {
    /// Takes the saved index when there is one this version wrote for this
    /// cache's key type; otherwise leaves the index empty (the build makes it).
    /// A damaged file is reported and moved aside, like any damaged file.
    func restoreSnapshot() {
        let file = store.layout.searchFile
        let records: [SearchSnapshotRecord]?
        do {
            records = try store.storage.readIfPresent(file, as: SearchSnapshotRecord.self)
        } catch {
            store.storage.logger.warning(
                "FlatCache could not read its saved search index; it builds it again", metadata: ["error": "\(error)"])
            return
        }
        guard let records, let snapshot = Snapshot(records: records), let restored = Index(stored: snapshot.index) else { return }
        var files = [String: Snapshot.File]()
        for (name, entry) in snapshot.files {
            // Each entry must be its channel's file: else an update of one channel could take away
            // another's documents.
            if let channelURL = entry.channelURL {
                guard name == store.layout.fileKey(forChannel: channelURL) + ".lines" else { return }
            } else {
                guard SHA256Digest(hex: Array(name.utf8.dropLast(6))) != nil else { return }
            }
            files[store.layout.messagesFile(named: name).path] = entry
        }
        // And every channel with documents has its file's entry (a channel's file may have none:
        // its messages had no text).
        guard Set(restored.indexedChannels).isSubset(of: files.values.compactMap(\.channelURL)) else { return }
        index = restored
        indexed = files
        changedSinceSnapshot = []
    }

    /// Returns once the snapshot writes asked so far are done (never call it on ``snapshotQueue``).
    func waitForSnapshotWrites() {
        snapshotQueue.sync {}
    }

    /// Saves the index now, in the background: the snapshot is taken here, on `queue` (a copy
    /// of the index, whose arrays are shared until the index next changes them), and compacted,
    /// made into lines and written on ``snapshotQueue``, so that searches do not wait for it
    /// (compacting after a change log and making the lines took 30 ms or more on workload L);
    /// a save asked before the last one started takes its place. Nothing on a read-only cache,
    /// or for a key type that cannot be saved.
    func saveSnapshot() {
        // The count first: a removal after it either shows in the ledger now or makes the write refuse.
        let hub = store.engine.hub
        let emptied = hub.emptiedCount
        guard !store.storage.isReadOnly, Snapshot.keyKind != nil, !ledger.hasEverything else { return }
        let prefix = store.layout.messagesDirectory + "/"
        var files = [String: Snapshot.File]()
        for (path, entry) in indexed where path.hasPrefix(prefix) { files[String(path.dropFirst(prefix.count))] = entry }
        let (taken, takenFiles) = (index, files)
        (changedSinceSnapshot, removedSinceSnapshot) = ([], false)
        let (storage, file) = (store.storage, store.layout.searchFile)
        let indexedFiles = indexed.filter { $0.value.stamp != nil }.map(\.key)
        snapshotSaves.run { [weak self] in
            var index = taken  // compacting the copy leaves the index searches use as it is
            // `nil`: a key type that cannot be saved (not here: `keyKind` was checked).
            guard let records = Snapshot(files: takenFiles, index: index.stored()).records() else { return }
            do {
                // Not over a removal made since the snapshot was taken (`removeAll()` by any process:
                // it holds every lock, this one's too): its words would be back on disk after a logout.
                let written = try storage.replace(file, with: records) { () throws(FlatCacheError) in
                    // This process's `removeAll()` or key change bumps the count holding every lock.
                    guard hub.emptiedCount == emptied else { return false }
                    for path in indexedFiles where try FileSystem.stamp(at: path) == nil { return false }
                    return true
                }
                // Refused (a removal came in between): the next catch-up saves again.
                if written == nil, let service = self { service.queue.async { service.removedSinceSnapshot = true } }
            } catch {
                // Derived data: the next launch builds what it lacks.
                storage.logger.warning("FlatCache could not save its search index", metadata: ["error": "\(error)"])
            }
        }
    }
}
