/// Loading the whole channel list so that a list moving under the load
/// cannot make a channel look gone.
///
/// Pages by offset shift when the list changes between them: a channel
/// moved up by a new message drops out of the pages still to come, and a
/// channel removed above the cursor makes the next page skip one. So a
/// load is taken as a snapshot only when the server's change log, asked
/// after the last page from the token taken before the first, lists no
/// change. Otherwise what the log lists is applied on top of the load and
/// the list is loaded again, up to three loads in all.
extension ChannelListCollection {
    /// The most whole-list loads one reload makes while the list keeps changing under them.
    static var maxWholeListLoads: Int { 3 }

    /// What a reload found.
    struct WholeList {
        /// The channels to cache: each seen in a load or the change log, and
        /// each cached one missing from the loads but not known to be gone.
        var channels: [Channel]
        /// URLs of the channels known to be gone: removed by the change log,
        /// or missing from a load during which nothing changed.
        var gone: [String]
        /// The change log token the list is in sync with; `nil` when no load
        /// held still (the next sync then loads the list whole again).
        var token: String?
    }

    /// Loads the whole list from the source, starting from the cached `cached`.
    func loadWholeList(cached: [Channel]) async throws(FlatCacheError) -> WholeList {
        var known = [RecordKey: Channel]()
        for channel in cached { known[RecordKey(channel.channelURL)] = channel }
        var gone = [RecordKey: String]()
        var token = try await ask("get the channel list's change log token") { [source] in
            try await source.channelChangeLogToken()
        }
        for _ in 0..<Self.maxWholeListLoads {
            var seen = Set<RecordKey>()
            for channel in try await loadPages() {
                let key = RecordKey(channel.channelURL)
                (known[key], gone[key]) = (channel, nil)
                seen.insert(key)
            }
            guard let log = try await changes(since: token) else {
                // The source cannot say what changed meanwhile: nothing missing is confirmed gone.
                return WholeList(channels: Array(known.values), gone: Array(gone.values), token: nil)
            }
            for channel in log.updated {
                let key = RecordKey(channel.channelURL)
                (known[key], gone[key]) = (channel, nil)
                seen.insert(key)
            }
            for url in log.removed {
                let key = RecordKey(url)
                (known[key], gone[key]) = (nil, url)
                seen.remove(key)
            }
            token = log.next
            if log.updated.isEmpty && log.removed.isEmpty {
                // Nothing changed while the pages were read: they are the whole list.
                for (key, channel) in known where !seen.contains(key) {
                    (known[key], gone[key]) = (nil, channel.channelURL)
                }
                return WholeList(channels: Array(known.values), gone: Array(gone.values), token: token)
            }
        }
        // The list never held still: what is missing stays, and the next sync loads the list whole again.
        return WholeList(channels: Array(known.values), gone: Array(gone.values), token: nil)
    }

    /// One pass over the list's pages, up to ``maxPages``.
    private func loadPages() async throws(FlatCacheError) -> [Channel] {
        var list = [Channel]()
        var cursor: String?
        for _ in 0..<maxPages {
            let from = cursor
            let limit = pageSize
            let page = try await ask("get a page of channels") { [source] in try await source.channels(from: from, limit: limit) }
            list += page.channels
            cursor = page.next
            if cursor == nil { break }
        }
        return list
    }

    /// Every change the list's change log holds since `token`, with the
    /// token after them; `nil` when the token is too old.
    private func changes(since token: String) async throws(FlatCacheError) -> (updated: [Channel], removed: [String], next: String)? {
        var token = token
        var updated = [Channel]()
        var removed = [String]()
        for _ in 0..<10_000 {
            let since = token
            let log = try await ask("get the channel list's change log") { [source] in
                try await source.channelChangeLog(since: since)
            }
            guard case .changes(let changed, let left, let next, let hasMore) = log else { return nil }
            // In order: a later page's change of a channel wins over an earlier one.
            let leftKeys = Set(left.map(RecordKey.init))
            let changedKeys = Set(changed.map { RecordKey($0.channelURL) })
            updated = updated.filter { !leftKeys.contains(RecordKey($0.channelURL)) && !changedKeys.contains(RecordKey($0.channelURL)) } + changed
            removed = removed.filter { !changedKeys.contains(RecordKey($0)) } + left
            token = next
            if !hasMore { break }
        }
        return (updated, removed, token)
    }
}
