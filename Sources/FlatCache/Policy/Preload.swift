import Foundation
import Logging

/// What seeding from ``Configuration/preloadedBundle`` did when the cache opened.
///
/// ```swift
/// if let preload = cache.preload, !preload.damaged.isEmpty {
///     print("bundle files skipped:", preload.damaged)
/// }
/// ```
public struct PreloadResult: Sendable, Hashable, CustomStringConvertible {
    /// Whether this bundle, unchanged, was seeded into the folder before, so
    /// that nothing was checked or copied: the cost of a launch after the first.
    public var upToDate = false
    /// Channels whose messages were copied from the bundle (the cache had none).
    public var channelsSeeded = 0
    /// Whether the channel list was copied (the cache had none).
    public var seededChannelList = false
    /// Whether the users were copied (the cache had none).
    public var seededUsers = false
    /// Bundle files the cache already had its own copy of, left as they were.
    public var alreadyCached = 0
    /// Bundle files that failed their check and were not copied; each path
    /// is the bundle file's full path, and `movedTo` is `nil` (the bundle is
    /// never changed).
    public var damaged = [DamagedFile]()

    /// A result with the given values; every argument defaults to nothing done.
    public init(
        upToDate: Bool = false, channelsSeeded: Int = 0, seededChannelList: Bool = false, seededUsers: Bool = false,
        alreadyCached: Int = 0, damaged: [DamagedFile] = []
    ) {
        self.upToDate = upToDate
        self.channelsSeeded = channelsSeeded
        self.seededChannelList = seededChannelList
        self.seededUsers = seededUsers
        self.alreadyCached = alreadyCached
        self.damaged = damaged
    }

    /// Such as `3 channels, the channel list and the users seeded; 1 already cached; 1 damaged`.
    public var description: String {
        if upToDate { return "seeded before, nothing to do" }
        var seeded = ["\(channelsSeeded) channel\(channelsSeeded == 1 ? "" : "s")"]
        if seededChannelList { seeded.append("the channel list") }
        if seededUsers { seeded.append("the users") }
        let list = seeded.count == 1 ? seeded[0] : seeded.dropLast().joined(separator: ", ") + " and " + seeded.last!
        return "\(list) seeded; \(alreadyCached) already cached; \(damaged.count) damaged"
    }
}

/// Seeds a cache folder from a read-only bundle folder that `flatcache import`
/// (or any FlatCache) wrote: each data file the cache lacks is copied after
/// it passes the same checks as a load; nothing the cache has is replaced,
/// and nothing in the bundle is changed.
///
/// The folder remembers the bundle it was seeded from (`preloaded`, the
/// SHA256 of the bundle's path and its two folders' stamps), so that a launch
/// with the same bundle costs two `stat`s and one small read. A channel
/// the cache dropped since (evicted, expired, removed) is therefore not
/// brought back by the same bundle; a new bundle (an app update) seeds what
/// is missing again, and ``ChatCache/removeAll()`` forgets the bundle.
struct Preload {
    let bundle: URL
    let layout: CacheLayout
    let storage: RecordStorage

    /// Seeds what is missing. Blocks; call while the cache opens.
    ///
    /// - Throws: ``FlatCacheError/notADirectory(_:)``, ``FlatCacheError/notACacheDirectory(_:)``
    ///   or ``FlatCacheError/unsupportedFormat(marker:directory:)`` for a bundle
    ///   that is not a FlatCache folder of this format,
    ///   ``FlatCacheError/recordTypeMismatch(directory:cached:requested:)`` for
    ///   one written with other record types, or a file-system error.
    func run<Message: MessageRecord, Channel: CacheRecord, User: CacheRecord>(
        _ message: Message.Type, _ channel: Channel.Type, _ user: User.Type
    ) throws(FlatCacheError) -> PreloadResult {
        let identity = try identity()
        if let seeded = try FileSystem.contentsOfFile(at: layout.preloadedPath), seeded == identity {
            return PreloadResult(upToDate: true)
        }
        let source = try open()
        var result = PreloadResult()
        if try seed(source.channelsFile, into: layout.channelsFile, as: Channel.self, &result) {
            result.seededChannelList = true
        }
        if try seed(source.usersFile, into: layout.usersFile, as: User.self, &result) {
            result.seededUsers = true
        }
        for file in try source.messageFiles() {
            // Names carry over, unless the bundle is plain and the cache encrypted: then
            // the name comes from the channel URL, under the key (a channel of no messages stays behind).
            let renamed = source.sealer != layout.sealer
            let target = renamed ? nil : layout.messagesFile(named: file.name)
            let seeded = try seed(file, into: target, as: Message.self, &result) { (messages: [Message]) throws(FlatCacheError) in
                try messages.first.map { (message: Message) throws(FlatCacheError) in try layout.messagesFile(forChannel: message.channelURL) }
            }
            if seeded { result.channelsSeeded += 1 }
        }
        // A damaged bundle file is checked (and reported) again at the next launch.
        if result.damaged.isEmpty {
            try FileSystem.replaceFile(at: layout.preloadedPath, with: identity, synchronized: storage.synchronized)
        }
        if result.channelsSeeded > 0 || result.seededChannelList || result.seededUsers || !result.damaged.isEmpty {
            storage.logger.info(
                "FlatCache seeded the cache from its preloaded bundle",
                metadata: ["bundle": "\(bundle.path)", "result": "\(result)"])
        }
        return result
    }

    /// What names this bundle as it is now: the SHA256 of its path and of
    /// its folder's and `messages/` folder's stamps, which move whenever a
    /// file in them is added, removed or replaced.
    private func identity() throws(FlatCacheError) -> Data {
        let root = bundle.path
        let stamps = [try FileSystem.folderStamp(at: root), try FileSystem.folderStamp(at: root + "/messages")]
        let text = "\(root)\n" + stamps.map { stamp in
            stamp.map { "\($0.device) \($0.inode) \($0.modified.seconds).\($0.modified.nanoseconds) \($0.changed.seconds).\($0.changed.nanoseconds)" } ?? "-"
        }.joined(separator: "\n")
        return Data((SHA256Digest(of: Data(text.utf8)).hex + "\n").utf8)
    }

    /// Whether `data` has the form of a `preloaded` file: 64 lowercase hex digits and `\n` (for `verify`).
    static func isIdentity(_ data: Data) -> Bool {
        data.count == 65 && data.last == UInt8(ascii: "\n") && SHA256Digest(hex: Array(data.dropLast())) != nil
    }

    /// The bundle's layout, once it is known to be a FlatCache folder of this
    /// format holding this cache's record types.
    private func open() throws(FlatCacheError) -> CacheLayout {
        let plain = CacheLayout(root: bundle.path)
        _ = try FormatMarker.prepare(plain, directory: bundle, synchronized: false, readOnly: true)
        let contents = try RecordTypesFile.readContents(plain)
        if let types = contents?.types, types != storage.recordTypes {
            throw .recordTypeMismatch(directory: bundle, cached: types, requested: storage.recordTypes)
        }
        // A bundle is plain, or encrypted with the cache's own key.
        guard let keyID = contents?.keyID else { return plain }
        guard let sealer = layout.sealer else { throw .encryptionKeyRequired(directory: bundle, keyID: keyID) }
        guard sealer.keyID == keyID else { throw .wrongEncryptionKey(directory: bundle, keyID: keyID, given: sealer.keyID) }
        return plain.sealed(by: sealer)
    }

    /// Copies `file` into `target` when the cache has no `target` and `file`
    /// checks out (sidecar, Base64, every record decodes); `true` when copied.
    ///
    /// - Parameter naming: Where records go when `target` is `nil` (the file's
    ///   name is not the cache's for it); `nil` from it leaves them behind.
    private func seed<R: CacheRecord>(
        _ file: RecordFile, into target: RecordFile?, as type: R.Type, _ result: inout PreloadResult,
        naming: ([R]) throws(FlatCacheError) -> RecordFile? = { _ in nil }
    ) throws(FlatCacheError) -> Bool {
        if let target, try !isMissing(target) {
            result.alreadyCached += try FileSystem.entry(at: file.path) == .missing ? 0 : 1
            return false
        }
        let lines: [Data]
        let records: [R]
        switch try file.read(finishing: false) {
        case .missing:
            return false
        case .corrupt(let problem):
            damaged(file, problem, &result)
            return false
        case .records(let found):
            do throws(Corruption) {
                records = try storage.decode(found, as: R.self)
            } catch {
                damaged(file, error, &result)
                return false
            }
            // A bundle's canonical lines are copied as they are; one with appended lines (format 2) is written canonically.
            lines = found.appended.isEmpty ? found.records : try storage.serialize(records)
        }
        let named: RecordFile? = if let target { target } else { try naming(records) }
        guard let target = named else { return false }
        // Under the file's lock: an instance saving this channel meanwhile wins, never the bundle.
        return try storage.withLock(target) { () throws(FlatCacheError) -> Bool in
            guard try isMissing(target) else {
                result.alreadyCached += 1
                return false
            }
            try FileSystem.createDirectory(at: FileSystem.parent(of: target.path))
            _ = try target.write(lines, synchronized: storage.synchronized)
            return true
        }
    }

    /// Whether the cache has no `target` data file.
    private func isMissing(_ target: RecordFile) throws(FlatCacheError) -> Bool {
        try FileSystem.entry(at: target.path) == .missing
    }

    /// Reports a bundle file that failed its check: logged and passed to
    /// ``Configuration/onDamagedFile``, never copied, never moved.
    private func damaged(_ file: RecordFile, _ problem: Corruption, _ result: inout PreloadResult) {
        let report = DamagedFile(path: file.path, problem: problem.description, movedTo: nil)
        storage.logger.warning(
            "FlatCache skipped a damaged file of its preloaded bundle",
            metadata: ["file": "\(file.path)", "reason": "\(problem)"])
        storage.onDamagedFile?(report)
        result.damaged.append(report)
    }
}
