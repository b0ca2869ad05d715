/// The channel list's change log token: what a ``ChannelListCollection``
/// syncs from. Kept in `channels.continuity` (see `docs/format.md`), an
/// attachment of `channels.lines`: it goes when the list is removed or
/// replaced whole, and is written only after the list it is true of.
extension ChannelStore {
    /// The change log token the cached channel list is in sync with; `nil`
    /// when none was recorded, or the list is not cached.
    ///
    /// Writes the list's changes waiting for write-behind first.
    /// - important: Requires disk I/O.
    /// - Throws: A file-system error.
    func changeLogToken() throws(FlatCacheError) -> String? {
        try withConsistentList { record throws(FlatCacheError) in record?.continuity.changeLogToken } ?? nil
    }

    /// Records the change log token the cached channel list is in sync
    /// with, after its changes were applied; nothing when the list is not cached.
    ///
    /// - important: Requires disk I/O.
    /// - Parameter token: The token, or `nil` to forget it.
    /// - Throws: ``FlatCacheError/readOnlyCache(_:)`` or a file-system error.
    func setChangeLogToken(_ token: String?) throws(FlatCacheError) {
        try storage.requireWritable()
        let file = layout.channelsContinuityFile
        let synchronized = storage.synchronized
        _ = try withConsistentList { _ throws(FlatCacheError) in
            let record = ContinuityRecord(continuity: ChannelContinuity(changeLogToken: token), anchor: nil)
            _ = try file.write([try record.serialize()], synchronized: synchronized)
        }
    }

    /// Runs `body` with the list's continuity record, holding the list's
    /// lock, when the list is on disk with no change waiting; `nil` otherwise.
    /// A damaged record is reported and moved aside, and read as none.
    private func withConsistentList<T>(_ body: (ContinuityRecord?) throws(FlatCacheError) -> T) throws(FlatCacheError) -> T? {
        let list = layout.channelsFile
        let file = layout.channelsContinuityFile
        // Twice: a damaged record is reported and moved aside, then read as none (a read-only cache cannot move it).
        var reported = false
        for _ in 0..<2 {
            try engine.writeWaitingChanges(list)
            var damaged: Corruption?
            let outcome = try storage.withLock(list) { () throws(FlatCacheError) -> T? in
                guard try FileSystem.stamp(at: list.path) != nil, !engine.hasChangesWaiting(list, ignoringMemoryOnly: true)
                else { return nil }
                switch try ContinuityRecord.read(file, finishing: !storage.isReadOnly) {
                case .success(let record): return try body(record)
                case .failure(let corruption):
                    if reported { return try body(nil) }
                    damaged = corruption
                }
                return nil
            }
            guard let damaged else { return outcome }
            _ = try storage.isolate(file, because: damaged, moving: true)
            reported = true
        }
        return nil
    }
}
