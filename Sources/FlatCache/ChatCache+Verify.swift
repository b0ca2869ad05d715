/// One file's state, as ``ChatCache/verify(repair:progress:)`` found it.
///
/// ```swift
/// for file in try await cache.verify() where !file.isValid { print(file.path, file.problem ?? "") }
/// ```
public struct VerifiedFile: Sendable, Hashable, Codable {
    /// The file's path inside the cache folder, such as `messages/<key>.lines`.
    public let path: String
    /// How many records it holds; 0 when it is not valid, and for `records`
    /// and `preloaded`, which are not data files.
    public let records: Int
    /// Why it cannot be trusted (its sidecar, its Base64, a record), or `nil` when it is valid.
    public let problem: String?
    /// Where ``ChatCache/verify(repair:progress:)`` moved it, when it repaired it.
    public let movedTo: String?
    /// How many bytes an append that never finished left after the records
    /// its sidecar names (a crash between writing the lines and the sidecar),
    /// or `nil` when there are none. They are not records, and a read ignores
    /// them; the file is valid. A repair cuts them off.
    public let unfinishedAppendBytes: Int?

    /// Whether the file passed every check.
    public var isValid: Bool { problem == nil }

    /// A file's state with the given facts.
    ///
    /// - Parameters:
    ///   - path: The file's path inside the cache folder.
    ///   - records: How many records it holds; 0 when it is not valid.
    ///   - problem: Why it cannot be trusted, or `nil` when it is valid.
    ///   - movedTo: Where it was moved inside the cache folder, or `nil`.
    ///   - unfinishedAppendBytes: The bytes an unfinished append left after its records, or `nil`.
    public init(path: String, records: Int, problem: String?, movedTo: String?, unfinishedAppendBytes: Int? = nil) {
        self.path = path
        self.records = records
        self.problem = problem
        self.movedTo = movedTo
        self.unfinishedAppendBytes = unfinishedAppendBytes
    }
}

extension ChatCache {
    /// Checks every file of the cache folder that the format defines, moving
    /// nothing unless `repair` is set: channels, users and every channel's
    /// messages (sidecar, Base64, every record decoded), the continuity files
    /// (`channels.continuity`, `messages/<key>.continuity`, with or without
    /// their message file), `outbox.lines` (every line an outbox record, its
    /// messages decoded), `usage.lines` (each record, in order of key), the
    /// `records` file (its three lines) and `preloaded` (its hex line).
    ///
    /// A data file that an append cut short by a crash (lines after the part
    /// its sidecar names) is valid: the entry gives the bytes after its
    /// records in ``VerifiedFile/unfinishedAppendBytes``.
    ///
    /// With `repair`, each bad file is moved into `quarantine/` exactly as a
    /// load would, logged and reported to ``Configuration/onDamagedFile``; the
    /// next save heals it. A bad `records` file is reported, never moved.
    /// A repair also finishes what a crash cut short: it cuts an unfinished
    /// append off, and renames a waiting sidecar into place. Without it,
    /// nothing in the folder changes.
    ///
    /// - important: Requires disk I/O; reads every file.
    /// - Parameters:
    ///   - repair: Whether to move bad files aside and finish what a crash cut short.
    ///   - progress: Called after each file with the number checked and the
    ///     total: the files found when the check began, so the last call has
    ///     `checked == total`.
    /// - Returns: One entry per file, channels and users first, then message
    ///   files by name, then the continuity files (`channels.continuity`, then
    ///   `messages/<key>.continuity` by name), then `outbox.lines`, `usage.lines`, `records`
    ///   and `preloaded`; files that do not exist get none.
    /// - Throws: ``FlatCacheError/readOnlyCache(_:)`` when `repair` is asked of a
    ///   read-only cache, or a file-system error.
    func verify(
        repair: Bool = false, progress: (_ checked: Int, _ total: Int) -> Void = { _, _ in }
    ) throws(FlatCacheError) -> [VerifiedFile] {
        if repair { try storage.requireWritable() }
        let storage = storage
        let verification = FolderVerification(storage: storage, layout: layout, count: { role, lines throws(Corruption) in
            switch role {
            case .channels: try storage.count(lines, as: Channel.self)
            case .users: try storage.count(lines, as: User.self)
            case .messages: try storage.count(lines, as: Message.self)
            case .outbox: try storage.count(lines, as: OutboxRecord<Message>.self)
            case .search: try storage.count(lines, as: SearchSnapshotRecord.self)
            }
        }, typed: true)
        return try verification.run(repair: repair, progress: progress)
    }
}

extension ChatCache {
    /// Checks every file of the cache folder that the format defines, as
    /// ``Blocking/verify(repair:progress:)`` does, on FlatCache's own threads:
    /// the `async` form an app calls.
    ///
    /// ```swift
    /// let damaged = try await cache.verify().filter { !$0.isValid }
    /// ```
    /// - Parameters:
    ///   - repair: Whether to move bad files aside and finish what a crash cut short.
    ///   - progress: Called after each file, on one of FlatCache's threads,
    ///     with the number checked and the total.
    /// - Returns: One entry per file, in the order the blocking form gives.
    /// - Throws: ``FlatCacheError/readOnlyCache(_:)`` when `repair` is asked of a
    ///   read-only cache, or a file-system error.
    public func verify(
        repair: Bool = false, progress: @escaping @Sendable (_ checked: Int, _ total: Int) -> Void = { _, _ in }
    ) async throws(FlatCacheError) -> [VerifiedFile] {
        // A repair moves and rewrites files: after write-behind, like the other writes.
        let work = { @Sendable [self] () throws(FlatCacheError) -> [VerifiedFile] in
            try self.verify(repair: repair, progress: progress)
        }
        return repair ? try await engine.writing(work) : try await engine.reading(work)
    }
}
