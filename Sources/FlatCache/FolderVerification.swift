import Foundation

/// Checks every file the format defines (`docs/format.md`) in one cache
/// folder: the one place behind ``ChatCache/verify(repair:progress:)`` and
/// ``CacheFolderSummary/verify(directory:progress:)``.
///
/// Data files (`outbox.lines` among them) are checked against their
/// sidecars and Base64, and their records with `count`; continuity files, `usage.lines`, `records` and
/// `preloaded` against their own rules, whatever the record types.
struct FolderVerification {
    let storage: RecordStorage
    let layout: CacheLayout
    /// How the lines of each data file are checked: decoded as the cache's
    /// record types, or (for a folder of other types) only counted.
    let count: (CacheFolderSummary.Role, FileLines) throws(Corruption) -> Int
    /// Whether `count` decodes the cache's own record types.
    let typed: Bool
    /// Whether the folder's lines are sealed and no key was given: then every
    /// file is checked against its sidecar and its Base64 only, the
    /// continuity files and `usage.lines` included (their lines are sealed too).
    var sealedWithoutKey = false

    /// One file to check: its path, and how.
    private enum Item {
        case data(RecordFile, CacheFolderSummary.Role)
        /// A continuity file, checked holding the lock of the file it describes (as its readers do).
        case continuity(RecordFile, of: RecordFile)
        case usage
        case recordTypes
        case preloaded
    }

    /// Checks each file that exists, in the order of ``ChatCache/verify(repair:progress:)``.
    func run(repair: Bool, progress: (_ checked: Int, _ total: Int) -> Void) throws(FlatCacheError) -> [VerifiedFile] {
        let items = try existingItems()
        var results = [VerifiedFile]()
        for (index, item) in items.enumerated() {
            if let result = try check(item, repair: repair) { results.append(result) }
            progress(index + 1, items.count)
        }
        return results
    }

    /// Every file to check that exists now: `progress` counts up to exactly these.
    private func existingItems() throws(FlatCacheError) -> [Item] {
        let messageFiles = try layout.messageFiles()
        var items: [Item] = [.data(layout.channelsFile, .channels), .data(layout.usersFile, .users)]
        items += messageFiles.map { .data($0, .messages) }
        items.append(.continuity(layout.channelsContinuityFile, of: layout.channelsFile))
        items += try continuityFiles().map { .continuity($0.continuity, of: $0.messages) }
        items.append(.data(layout.outboxFile, .outbox))
        items.append(.data(layout.searchFile, .search))
        items += [.usage, .recordTypes, .preloaded]
        var existing = [Item]()
        for item in items where try FileSystem.entry(at: path(of: item)) != .missing { existing.append(item) }
        return existing
    }

    /// Each `messages/<key>.continuity`, with or without its message file, by name.
    private func continuityFiles() throws(FlatCacheError) -> [(continuity: RecordFile, messages: RecordFile)] {
        guard try FileSystem.entry(at: layout.messagesDirectory) == .directory else { return [] }
        let suffix = ".continuity"
        return try FileSystem.contentsOfDirectory(at: layout.messagesDirectory).sorted().compactMap { name in
            guard name.hasSuffix(suffix), SHA256Digest(hex: Array(name.utf8.dropLast(suffix.utf8.count))) != nil
            else { return nil }
            let messages = layout.messagesFile(named: String(name.dropLast(suffix.count)) + ".lines")
            return (layout.continuityFile(of: messages), messages)
        }
    }

    private func path(of item: Item) -> String {
        switch item {
        case .data(let file, _), .continuity(let file, _): file.path
        case .usage: layout.usageFile.path
        case .recordTypes: layout.recordTypesPath
        case .preloaded: layout.preloadedPath
        }
    }

    /// One file's state; `nil` when it went missing since the listing.
    private func check(_ item: Item, repair: Bool) throws(FlatCacheError) -> VerifiedFile? {
        switch item {
        case .data(let file, let role):
            return try checkData(file, lockedAs: file, repair: repair) { lines throws(Corruption) in try count(role, lines) }
        case .continuity(let file, let described):
            return try checkData(file, lockedAs: described, repair: repair) { lines throws(Corruption) in
                guard lines.appended.isEmpty else { throw .appendedLinesNotAllowed }
                if sealedWithoutKey { return lines.records.count }
                _ = try ContinuityRecord.record(in: lines.records)
                return 1
            }
        case .usage:
            return try checkData(layout.usageFile, lockedAs: layout.usageFile, repair: repair, typed: false) {
                lines throws(Corruption) in
                guard lines.appended.isEmpty else { throw .appendedLinesNotAllowed }
                return sealedWithoutKey ? lines.records.count : try ChannelUsage.check(lines.records)
            }
        case .recordTypes:
            return try checkWhole(RecordFile(path: layout.recordTypesPath), repair: false) { data in
                RecordTypesFile.parse(data) == nil
                    ? "it is not the three lines 'messages <type>', 'channels <type>', 'users <type>'" : nil
            }
        case .preloaded:
            return try checkWhole(RecordFile(path: layout.preloadedPath), repair: repair) { data in
                Preload.isIdentity(data) ? nil : "it is not 64 lowercase hex digits and a newline"
            }
        }
    }

    /// A data file with a sidecar, its lines checked by `count`.
    private func checkData(
        _ file: RecordFile, lockedAs lockFile: RecordFile, repair: Bool, typed: Bool? = nil,
        count: (FileLines) throws(Corruption) -> Int
    ) throws(FlatCacheError) -> VerifiedFile? {
        let relative = storage.relative(file.path)
        let inspected = try storage.withLock(lockFile) { () throws(FlatCacheError) in
            try storage.inspectLocked(file, finishing: repair, typed: typed ?? self.typed, count: count)
        }
        guard let (result, unfinished) = inspected else { return nil }
        let trailing = unfinished > 0 ? unfinished : nil
        switch result {
        case .success(let records):
            return VerifiedFile(path: relative, records: records, problem: nil, movedTo: nil, unfinishedAppendBytes: trailing)
        case .failure(let corruption):
            let movedTo = try storage.isolate(file, because: corruption, moving: repair)
            return VerifiedFile(
                path: relative, records: 0, problem: corruption.description, movedTo: movedTo,
                unfinishedAppendBytes: movedTo == nil ? trailing : nil)
        }
    }

    /// A file without a sidecar, read whole; `problem` says what is wrong with its bytes.
    private func checkWhole(
        _ file: RecordFile, repair: Bool, problem: (Data) -> String?
    ) throws(FlatCacheError) -> VerifiedFile? {
        let found: String?
        do {
            guard let data = try FileSystem.contentsOfFile(at: file.path) else { return nil }
            found = problem(data)
        } catch where FileSystem.isNotARegularFile(error) {
            found = Corruption.notARegularFile.description
        }
        guard let found else {
            return VerifiedFile(path: storage.relative(file.path), records: 0, problem: nil, movedTo: nil)
        }
        let movedTo = try storage.isolate(file, because: .unexpectedContents(found), moving: repair)
        return VerifiedFile(path: storage.relative(file.path), records: 0, problem: found, movedTo: movedTo)
    }
}
