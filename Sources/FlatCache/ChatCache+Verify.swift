/// One data file's state, as ``ChatCache/verify(repair:progress:)`` found it.
///
/// ```swift
/// for file in try cache.verify() where !file.isValid { print(file.path, file.problem ?? "") }
/// ```
public struct VerifiedFile: Sendable, Hashable, Codable {
    /// The data file's path inside the cache folder, such as `messages/<key>.lines`.
    public let path: String
    /// How many records it holds; 0 when it is not valid.
    public let records: Int
    /// Why it cannot be trusted (its sidecar, its Base64, a record), or `nil` when it is valid.
    public let problem: String?
    /// Where ``ChatCache/verify(repair:progress:)`` moved it, when it repaired it.
    public let movedTo: String?

    /// Whether the file passed every check.
    public var isValid: Bool { problem == nil }

    /// A file's state with the given facts.
    ///
    /// - Parameters:
    ///   - path: The data file's path inside the cache folder.
    ///   - records: How many records it holds; 0 when it is not valid.
    ///   - problem: Why it cannot be trusted, or `nil` when it is valid.
    ///   - movedTo: Where it was moved inside the cache folder, or `nil`.
    public init(path: String, records: Int, problem: String?, movedTo: String?) {
        self.path = path
        self.records = records
        self.problem = problem
        self.movedTo = movedTo
    }
}

extension ChatCache {
    /// Checks every data file of the cache (channels, users, every channel's
    /// messages, and the continuity kept with them) against its sidecar and
    /// decodes every record, moving nothing unless `repair` is set.
    ///
    /// With `repair`, each bad file is moved into `quarantine/` exactly as a
    /// load would, logged and reported to ``Configuration/onDamagedFile``; the
    /// next save heals it. Without it, nothing in the folder changes.
    ///
    /// - important: Requires disk I/O; reads every file.
    /// - Parameters:
    ///   - repair: Whether to move bad files aside.
    ///   - progress: Called after each file with the number checked and the total.
    /// - Returns: One entry per data file, channels and users first, then message files by name,
    ///   then the continuity files (`channels.continuity`, `messages/<key>.continuity`).
    /// - Throws: ``FlatCacheError/readOnlyCache(_:)`` when `repair` is asked of a
    ///   read-only cache, or a file-system error.
    public func verify(
        repair: Bool = false, progress: (_ checked: Int, _ total: Int) -> Void = { _, _ in }
    ) throws(FlatCacheError) -> [VerifiedFile] {
        if repair { try storage.requireWritable() }
        let messageFiles = try layout.messageFiles()
        var attachments = [(of: RecordFile, file: RecordFile)]()
        for file in [layout.channelsFile] + messageFiles {
            guard let path = file.attachment, try FileSystem.entry(at: path) != .missing else { continue }
            attachments.append((file, RecordFile(path: path)))
        }
        let total = 2 + messageFiles.count + attachments.count
        var results = [VerifiedFile]()
        func check<R: CacheRecord>(_ file: RecordFile, as type: R.Type) throws(FlatCacheError) {
            defer { progress(results.count, total) }
            let relative = storage.relative(file.path)
            switch try storage.inspect(file, as: type) {
            case nil:
                return
            case .success(let count):
                results.append(VerifiedFile(path: relative, records: count, problem: nil, movedTo: nil))
            case .failure(let corruption):
                let movedTo = try storage.isolate(file, because: corruption, moving: repair)
                results.append(VerifiedFile(path: relative, records: 0, problem: corruption.description, movedTo: movedTo))
            }
        }
        /// A continuity file, checked holding the lock of the file it describes (as its readers do).
        func checkAttachment(_ attachment: RecordFile, of file: RecordFile) throws(FlatCacheError) {
            defer { progress(results.count, total) }
            let relative = storage.relative(attachment.path)
            let found = try storage.withLock(file) { () throws(FlatCacheError) in try ContinuityRecord.read(attachment, finishing: false) }
            switch found {
            case .success(nil):
                return  // removed with its file since the listing
            case .success:
                results.append(VerifiedFile(path: relative, records: 1, problem: nil, movedTo: nil))
            case .failure(let corruption):
                let movedTo = try storage.isolate(attachment, because: corruption, moving: repair)
                results.append(VerifiedFile(path: relative, records: 0, problem: corruption.description, movedTo: movedTo))
            }
        }
        try check(layout.channelsFile, as: Channel.self)
        try check(layout.usersFile, as: User.self)
        for file in messageFiles { try check(file, as: Message.self) }
        for (file, attachment) in attachments { try checkAttachment(attachment, of: file) }
        return results
    }
}
