import Foundation

/// Where each file lives under the cache root (format version 1):
///
/// ```
/// format                   "flatcache 2\n" ("flatcache 1\n" until the first write)
/// records                  which record types wrote the folder, and the key id when encrypted
/// rekey                    a key change under way: which keys (see ``KeyChange``)
/// channels.lines(.sha256)  group channels
/// channels.continuity(.sha256)  the channel list's change log token
/// users.lines(.sha256)     users
/// usage.lines(.sha256)     when each channel was last saved and used (expiry, size sweeps)
/// outbox.lines(.sha256)    messages written but not sent yet (see ``Outbox``)
/// preloaded                which preloaded bundle the folder was seeded from
/// messages/<key>.lines(.sha256)  one channel's messages; key = hex SHA256 of the URL's UTF-8
///                          (encrypted: hex HMAC-SHA256 under the key)
/// messages/<key>.continuity(.sha256)  what is known complete of them, and the change log token
/// quarantine/              files that failed their check
/// ```
struct CacheLayout: Sendable {
    /// The cache folder's path, without a trailing slash.
    let root: String
    /// Message file paths already worked out, by channel URL.
    private let names = ChannelFileNames()

    /// What seals every data file's lines and names message files, in an encrypted folder.
    let sealer: Sealer?

    /// The layout of the folder at `root`, encrypted when `sealer` is given.
    init(root: String, sealer: Sealer? = nil) {
        var root = root
        while root.count > 1 && root.hasSuffix("/") { root.removeLast() }
        self.root = root
        self.sealer = sealer
        channelsFile = RecordFile(path: root + "/channels.lines", attachment: root + "/channels.continuity", sealer: sealer)
        usersFile = RecordFile(path: root + "/users.lines", sealer: sealer)
        usageFile = RecordFile(path: root + "/usage.lines", sealer: sealer)
        outboxFile = RecordFile(path: root + "/outbox.lines", sealer: sealer)
        searchFile = RecordFile(path: root + "/search.lines", sealer: sealer)
    }

    /// The same folder's layout with `sealer` (another key, or none).
    func sealed(by sealer: Sealer?) -> CacheLayout {
        CacheLayout(root: root, sealer: sealer)
    }

    /// The names FlatCache itself puts at the root, besides the marker.
    var ownNames: Set<String> {
        let files = [channelsFile, usersFile, usageFile, outboxFile, searchFile].map(\.name) + ["channels.continuity"]
        return Set(files + files.map { $0 + ".sha256" } + ["records", "rekey", "preloaded", "journal", "messages", "quarantine"])
    }

    /// The format marker file.
    var formatMarkerPath: String { root + "/format" }

    /// The journal of synchronized flushes (format 2, see ``Journal``).
    var journalPath: String { root + "/journal" }

    /// The file naming the preloaded bundle the folder was seeded from (see ``Preload``).
    var preloadedPath: String { root + "/preloaded" }

    /// The file naming the record types that wrote the folder.
    var recordTypesPath: String { root + "/records" }

    /// The file that says a key change is under way (see ``KeyChange``).
    var keyChangePath: String { root + "/rekey" }

    /// The group channels.
    let channelsFile: RecordFile

    /// The users.
    let usersFile: RecordFile

    /// When each channel was last saved and used (see ``ChannelUsage``).
    let usageFile: RecordFile

    /// The messages written but not sent yet, a log of their states (see ``Outbox``).
    let outboxFile: RecordFile

    /// The search index, saved so that the next launch need not build it again
    /// (see ``SearchSnapshot``): derived data, removed and rebuilt at will.
    let searchFile: RecordFile

    /// The folder of per-channel message files.
    var messagesDirectory: String { root + "/messages" }

    /// Where corrupt files are moved aside.
    var quarantine: Quarantine { Quarantine(directory: root + "/quarantine") }

    /// The message file of the channel at `channelURL`.
    ///
    /// Its name is the lowercase hex SHA256 of the URL's UTF-8 bytes (in an
    /// encrypted folder, HMAC-SHA256 under the key, so that the name reveals
    /// nothing): any URL (`../../etc/passwd`, 10,000 characters, emoji, names
    /// differing only by case) gives a distinct, safe, fixed-length name inside `messages/`.
    ///
    /// - Throws: ``FlatCacheError/emptyChannelURL``.
    func messagesFile(forChannel channelURL: String) throws(FlatCacheError) -> RecordFile {
        guard !channelURL.isEmpty else { throw .emptyChannelURL }
        if let known = names[channelURL] { return known }
        let file = messagesFile(named: fileKey(forChannel: channelURL) + ".lines")
        names[channelURL] = file
        return file
    }

    /// The 64 hex digits naming the message file of `channelURL` (see ``messagesFile(forChannel:)``).
    func fileKey(forChannel channelURL: String) -> String {
        sealer?.fileKey(forChannel: channelURL) ?? SHA256Digest(of: Data(channelURL.utf8)).hex
    }

    /// The message file `name` (`<key>.lines`) in `messages/`, with its continuity attached.
    func messagesFile(named name: String) -> RecordFile {
        let path = messagesDirectory + "/" + name
        return RecordFile(path: path, attachment: String(path.dropLast(".lines".count)) + ".continuity", sealer: sealer)
    }

    /// The channel list's continuity file: its change log token.
    var channelsContinuityFile: RecordFile { RecordFile(path: channelsFile.attachment!, sealer: sealer) }

    /// The continuity file of the channel whose messages are in `file` (see ``ChannelContinuity``).
    func continuityFile(of file: RecordFile) -> RecordFile {
        RecordFile(path: file.attachment ?? String(file.path.dropLast(".lines".count)) + ".continuity", sealer: sealer)
    }

    /// The message files in `messages/`, by name: names of 64 lowercase hex
    /// digits and `.lines`; anything else there is not a data file.
    func messageFiles() throws(FlatCacheError) -> [RecordFile] {
        guard try FileSystem.entry(at: messagesDirectory) == .directory else { return [] }
        return try FileSystem.contentsOfDirectory(at: messagesDirectory).compactMap { name in
            guard name.hasSuffix(".lines"), SHA256Digest(hex: Array(name.utf8.dropLast(6))) != nil else { return nil }
            return messagesFile(named: name)
        }
    }
}

/// Message files by channel URL (matched byte for byte, as file names are),
/// so that a chat screen's many calls about one channel hash its URL once.
/// Holds a few thousand; past that it starts again.
private final class ChannelFileNames: @unchecked Sendable {
    private let lock = NSLock()
    private var files = [RecordKey: RecordFile]()  // guarded by `lock`

    subscript(channelURL: String) -> RecordFile? {
        get { lock.withLock { files[RecordKey(channelURL)] } }
        set {
            lock.withLock {
                if files.count >= 4_096 { files.removeAll(keepingCapacity: true) }
                files[RecordKey(channelURL)] = newValue
            }
        }
    }
}
