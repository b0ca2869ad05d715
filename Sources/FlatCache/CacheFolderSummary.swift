public import Foundation
import Logging

/// What a cache folder holds, read without decoding a single record: for
/// tools that meet folders written with any record types.
///
/// Opens nothing for writing and changes nothing: every data file is checked
/// against its sidecar and its Base64, then counted by lines. No key is
/// needed: in an encrypted folder each line is still one record, and
/// ``keyID`` says which key seals them.
///
/// ```swift
/// let summary = try CacheFolderSummary.read(directory: folder)
/// print(summary.recordTypes?.messages ?? "unknown", summary.files.map(\.records).reduce(0, +))
/// ```
public struct CacheFolderSummary: Sendable, Hashable, Codable {
    /// What a data file holds.
    public enum Role: String, Sendable, Hashable, Codable {
        /// `channels.lines`.
        case channels
        /// `users.lines`.
        case users
        /// One channel's `messages/<key>.lines`.
        case messages
        /// `outbox.lines`, the messages queued to send: one line per state of an
        /// entry (see ``Outbox``), so its records are lines, not entries.
        case outbox
        /// `search.lines`, the saved search index (see ``MessageSearch``): derived
        /// data, built again from the messages when it is missing or damaged.
        case search
    }

    /// One data file, as found.
    public struct File: Sendable, Hashable, Codable {
        /// The data file's path inside the cache folder, such as `messages/<key>.lines`.
        public let path: String
        /// What it holds.
        public let role: Role
        /// How many lines it holds: its records, and in a message, channel
        /// or user file of format 2 its appended lines too (an edit or a
        /// deletion is a line until compaction; the summary decodes no record
        /// to apply them).
        /// 0 when it is damaged.
        public let records: Int
        /// The data file's size in bytes.
        public let bytes: Int
        /// When it was last written, in milliseconds since 1970.
        public let modifiedAt: Int64
        /// Why it cannot be trusted, or `nil` when its sidecar and Base64 check out.
        /// Records are not decoded, so one that would not decode is not found here.
        public let problem: String?
    }

    /// The record types the folder names, or `nil` for a folder written before it named them.
    public let recordTypes: RecordTypes?
    /// The id of the key that seals the folder's lines (``Encryption/keyID``),
    /// as its `records` file names it; `nil` for a plain folder.
    public let keyID: String?
    /// Every data file: channels and users first, then message files by name, then `outbox.lines`.
    public let files: [File]

    /// The path, inside a cache folder, of the message file of the channel at
    /// `channelURL`: `messages/<key>.lines`, the key being the lowercase hex
    /// SHA256 of the URL's UTF-8 bytes, or in a folder encrypted with
    /// `encryption` the lowercase hex HMAC-SHA256 of them under its key.
    ///
    /// ```swift
    /// let summary = try CacheFolderSummary.read(directory: folder)
    /// let path = try CacheFolderSummary.messagesFilePath(forChannel: channelURL, encryption: .aes256gcm(key: key))
    /// let file = summary.files.first { $0.path == path }
    /// ```
    /// - Parameters:
    ///   - channelURL: The channel's URL.
    ///   - encryption: The folder's encryption; `nil` (the default) for a plain folder.
    /// - Returns: The path, to find the channel among ``files``.
    /// - Throws: ``FlatCacheError/emptyChannelURL``, or
    ///   ``FlatCacheError/invalidEncryptionKey(byteCount:)`` for a key that is not 32 bytes.
    public static func messagesFilePath(
        forChannel channelURL: String, encryption: Encryption? = nil
    ) throws(FlatCacheError) -> String {
        let sealer = try encryption.map { (encryption) throws(FlatCacheError) in try Sealer(encryption) }
        let layout = CacheLayout(root: "", sealer: sealer)
        return String(try layout.messagesFile(forChannel: channelURL).path.dropFirst())
    }

    /// The id of the key that seals the lines of the cache folder at
    /// `directory` (``Encryption/keyID``), as its `records` file names it;
    /// `nil` for a plain folder. Reads that one small file, without a key:
    /// to tell which key a folder needs before opening it.
    ///
    /// ```swift
    /// if let keyID = try CacheFolderSummary.keyID(directory: folder), keyID != Encryption.aes256gcm(key: key).keyID {
    ///     // not this key: the folder was encrypted with another one
    /// }
    /// ```
    /// - important: Requires disk I/O.
    /// - Parameter directory: A FlatCache folder; read permission is enough.
    /// - Returns: The key id, or `nil` when the folder is not encrypted.
    /// - Throws: ``FlatCacheError/notADirectory(_:)``, ``FlatCacheError/notACacheDirectory(_:)``,
    ///   ``FlatCacheError/unsupportedFormat(marker:directory:)``, or a file-system error.
    public static func keyID(directory: URL) throws(FlatCacheError) -> String? {
        _ = try FormatMarker.prepare(
            CacheLayout(root: directory.path), directory: directory, synchronized: false, readOnly: true)
        return try RecordTypesFile.readContents(CacheLayout(root: directory.path))?.keyID
    }

    /// Reads the summary of the cache folder at `directory`.
    ///
    /// - important: Requires disk I/O; reads every data file.
    /// - Parameter directory: A FlatCache folder; read permission is enough.
    /// - Returns: The folder's record types, key id and data files.
    /// - Throws: ``FlatCacheError/notADirectory(_:)``, ``FlatCacheError/notACacheDirectory(_:)``,
    ///   ``FlatCacheError/unsupportedFormat(marker:directory:)``, or a file-system error.
    public static func read(directory: URL) throws(FlatCacheError) -> CacheFolderSummary {
        _ = try FormatMarker.prepare(
            CacheLayout(root: directory.path), directory: directory, synchronized: false, readOnly: true)
        let layout = CacheLayout(root: try FileSystem.canonicalPath(of: directory.path))
        let locks = LockStripes.shared(forFolder: layout.root, lockFilePath: layout.formatMarkerPath)
        var files = [File]()
        func add(_ file: RecordFile, _ role: Role) throws(FlatCacheError) {
            let (contents, entry, modifiedAt) = try locks.withLock(for: file.path, shared: true) {
                () throws(FlatCacheError) in
                (try file.read(finishing: false), try FileSystem.entry(at: file.path),
                 try FileSystem.modificationTime(at: file.path))
            }
            let records: Int
            let problem: String?
            switch contents {
            case .missing: return
            case .records(let lines) where lines.appended.isEmpty || ![.outbox, .search].contains(role): (records, problem) = (lines.lineCount, nil)
            case .records: (records, problem) = (0, Corruption.appendedLinesNotAllowed.description)
            case .corrupt(let corruption): (records, problem) = (0, corruption.description)
            }
            let bytes = if case .file(let size) = entry { size } else { 0 }
            files.append(File(
                path: String(file.path.dropFirst(layout.root.count + 1)), role: role, records: records,
                bytes: bytes, modifiedAt: modifiedAt ?? 0, problem: problem))
        }
        try add(layout.channelsFile, .channels)
        try add(layout.usersFile, .users)
        for file in try layout.messageFiles() { try add(file, .messages) }
        try add(layout.outboxFile, .outbox)
        try add(layout.searchFile, .search)
        let recorded = try RecordTypesFile.readContents(layout)
        return CacheFolderSummary(recordTypes: recorded?.types, keyID: recorded?.keyID, files: files)
    }

    /// Checks every file of the cache folder at `directory` that the format
    /// defines, as ``ChatCache/verify(repair:progress:)`` does, without
    /// decoding the records of its data files: for a folder written with any
    /// record types. Their lines are checked against their sidecars and their
    /// Base64; continuity files, `usage.lines`, `records` and `preloaded` are
    /// checked whole, since their form is FlatCache's own.
    ///
    /// No key is needed. In an encrypted folder (its `records` file names a
    /// key id; see ``read(directory:)``) no line is opened: every file with a
    /// sidecar, continuity files and `usage.lines` included, is checked
    /// against its sidecar and its Base64 only, the check `sha256sum -c` makes.
    /// A changed byte is found (the sidecar no longer matches); a line moved
    /// from another file with its sidecar forged to match is found only by
    /// ``ChatCache/verify(repair:progress:)`` with the key.
    ///
    /// ```swift
    /// let bad = try CacheFolderSummary.verify(directory: folder).filter { !$0.isValid }
    /// ```
    ///
    /// Reads only: it moves, finishes and reports nothing.
    /// - important: Requires disk I/O; reads every file.
    /// - Parameters:
    ///   - directory: A FlatCache folder; read permission is enough.
    ///   - progress: Called after each file with the number checked and the total.
    /// - Returns: One entry per file, in the order of ``ChatCache/verify(repair:progress:)``.
    /// - Throws: ``FlatCacheError/notADirectory(_:)``, ``FlatCacheError/notACacheDirectory(_:)``,
    ///   ``FlatCacheError/unsupportedFormat(marker:directory:)``, or a file-system error.
    public static func verify(
        directory: URL, progress: (_ checked: Int, _ total: Int) -> Void = { _, _ in }
    ) throws(FlatCacheError) -> [VerifiedFile] {
        _ = try FormatMarker.prepare(
            CacheLayout(root: directory.path), directory: directory, synchronized: false, readOnly: true)
        let layout = CacheLayout(root: try FileSystem.canonicalPath(of: directory.path))
        let recorded = try RecordTypesFile.readContents(layout)
        let types = recorded?.types ?? RecordTypes(messages: "", channels: "", users: "")
        let storage = RecordStorage(
            root: layout.root, directory: directory, recordTypes: types, synchronized: false, isReadOnly: true,
            quarantine: layout.quarantine, logger: Logger(label: "flatcache") { _ in SwiftLogNoOpLogHandler() },
            onDamagedFile: nil, locks: LockStripes.shared(forFolder: layout.root, lockFilePath: layout.formatMarkerPath))
        let verification = FolderVerification(
            storage: storage, layout: layout, count: { role, lines throws(Corruption) in
                // Without the record types, a message file's appended lines are counted as lines, not applied.
                guard lines.appended.isEmpty || role != .outbox else { throw .appendedLinesNotAllowed }
                return lines.lineCount
            }, typed: false,
            sealedWithoutKey: recorded?.keyID != nil)
        return try verification.run(repair: false, progress: progress)
    }
}
