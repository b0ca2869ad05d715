import Foundation
import Logging

/// When each channel's messages were last saved and last used (loaded or
/// saved) by the app: what expiry and the size sweep's least-recently-used
/// order go by.
///
/// Kept in memory and updated on every call without touching the disk;
/// written to the folder's `usage.lines` (with its sidecar, like every data
/// file) by a flush (at most every ``CachePolicy/usageWriteInterval``),
/// `close()` or a sweep, merged with what other
/// processes wrote there (the later time wins). Channels are named by their
/// message file's name, so the file holds no channel URL.
///
/// With the times goes the stamp of the message file they were recorded
/// with (``Times/file``): a file whose stamp is no longer that was written
/// since by another writer, which may not have written its times yet, and
/// counts as saved and used when that is noticed (see ``writtenSinceItsTimes(_:stamp:usageStamp:)``).
final class ChannelUsage: @unchecked Sendable {
    /// One channel's times, in milliseconds since 1970 by the cache's clock.
    struct Times: Hashable, Sendable {
        /// Its last save (an unchanged one included); ``unknown`` when only loads were seen.
        var saved: Int64
        /// Its last save or load.
        var used: Int64
        /// The message file as it was when `saved` was recorded, when known.
        var file: FileMark?

        /// A save time not known (yet): never expired by it.
        static let unknown = Int64.min

        /// Notes a load (or, when `saved`, a save) at `now`; times never go back.
        mutating func touch(at now: Int64, saved: Bool) {
            used = max(used, now)
            if saved { self.saved = max(self.saved, now) }
        }

        /// The later of each time, and the file of the later save.
        func merged(with other: Times) -> Times {
            let file = other.saved > saved || (other.saved == saved && self.file == nil) ? other.file : self.file
            return Times(saved: max(saved, other.saved), used: max(used, other.used), file: file)
        }
    }

    /// What of a message file's stamp tells whether anyone wrote it since:
    /// a replace makes a new inode, an append changes the size, every write
    /// moves the modification time.
    struct FileMark: Hashable, Sendable {
        let inode: UInt64
        let size: Int64
        /// Nanoseconds since 1970.
        let modified: Int64

        init(inode: UInt64, size: Int64, modified: Int64) {
            (self.inode, self.size, self.modified) = (inode, size, modified)
        }

        init(_ stamp: FileStamp) {
            inode = stamp.inode
            size = Int64(stamp.size)
            modified = Int64(stamp.modified.seconds) &* 1_000_000_000 &+ Int64(stamp.modified.nanoseconds)
        }
    }

    /// `usage.lines` at the cache root.
    let file: RecordFile

    // Lock rule (docs/reliability.md, "Liveness"): held only to read or change the fields it guards;
    // nothing is resumed, yielded or called out while it is held.
    private let lock = NSLock()
    // Guarded by `lock`.
    private var times = [String: Times]()
    private var changed = false
    private var filesWritten = false
    private var ownWrites = [String: FileStamp]()

    init(file: RecordFile) {
        self.file = file
    }

    /// Records a load (`saved: false`) or a save of the channel whose message file is `name`.
    func touch(_ name: String, at now: Int64, saved: Bool) {
        lock.withLock {
            // In place: one lookup of the name, not a read and a write.
            times[name, default: Times(saved: saved ? now : Times.unknown, used: now)].touch(at: now, saved: saved)
            changed = true
        }
    }

    /// The times of the channel whose message file is `name`, when known.
    func times(of name: String) -> Times? {
        lock.withLock { times[name] }
    }

    /// Every channel's times known in memory.
    var all: [String: Times] { lock.withLock { times } }

    /// Whether memory holds times not yet written to `usage.lines`, or a
    /// data file was written since it was.
    var hasChanges: Bool { lock.withLock { changed || filesWritten } }

    /// Notes that this process wrote data files, with their stamps once
    /// written: `usage.lines` is to be written after them, and until it is,
    /// they are known from another process's (see ``writtenSinceItsTimes(_:stamp:usageStamp:)``).
    func wrote(_ stamps: [(name: String, stamp: FileStamp)]) {
        lock.withLock {
            filesWritten = true
            for (name, stamp) in stamps {
                ownWrites[name] = stamp
                // This write is the save its times record.
                times[name]?.file = FileMark(stamp)
            }
        }
    }

    /// Whether the message file `name`, whose stamp is now `stamp`, was
    /// written after the times known for it were recorded: by another
    /// writer, which may not have written its times to `usage.lines` yet.
    ///
    /// Told by the file's stamp recorded with the times; for times recorded
    /// without one (records of version 1), by the file being modified after
    /// `usage.lines` (`usageStamp`) and not by this process's last write.
    func writtenSinceItsTimes(_ name: String, stamp: FileStamp, usageStamp: FileStamp?) -> Bool {
        lock.withLock { writtenSince(name, stamp: stamp, usageStamp: usageStamp) }
    }

    /// ``writtenSinceItsTimes(_:stamp:usageStamp:)``. Lock held.
    private func writtenSince(_ name: String, stamp: FileStamp, usageStamp: FileStamp?) -> Bool {
        if let file = times[name]?.file { return file != FileMark(stamp) }
        guard let usageStamp, stamp.modified.milliseconds > usageStamp.modified.milliseconds else { return false }
        return ownWrites[name] != stamp
    }

    /// Learns `found` (read from the file, or a message file's modification
    /// time), keeping the later time of each.
    func merge(_ found: [String: Times]) {
        lock.withLock {
            for (name, entry) in found { times[name] = times[name].map { $0.merged(with: entry) } ?? entry }
        }
    }

    /// Forgets channels whose files were removed.
    func forget(_ names: some Sequence<String>) {
        lock.withLock {
            for name in names where times.removeValue(forKey: name) != nil { changed = true }
        }
    }

    // MARK: - The file

    /// Reads `usage.lines` into memory (the later time of each wins); a
    /// missing or damaged file adds nothing. Call holding its lock.
    func readLocked(logger: Logger) throws(FlatCacheError) {
        merge(try Self.read(file, logger: logger))
    }

    /// Writes the times in memory, merged with those in the file, to
    /// `usage.lines`, keeping only channels `keep` accepts. A channel whose
    /// message file another writer wrote since its times were recorded
    /// counts as saved and used `now` (its writer's times may never come),
    /// and every channel's times are written with its file's stamp
    /// (`stamp(name)`, `nil` when it has no file). Call holding its lock.
    func writeLocked(
        synchronized: Bool, logger: Logger, now: Int64, stamp: (String) throws(FlatCacheError) -> FileStamp?,
        keep: (String) -> Bool = { _ in true }
    ) throws(FlatCacheError) {
        let usageStamp = try FileSystem.stamp(at: file.path)
        merge(try Self.read(file, logger: logger))
        var stamps = [String: FileStamp]()
        for name in lock.withLock({ Array(times.keys) }) {
            if let found = try stamp(name) { stamps[name] = found }
        }
        lock.withLock {
            for (name, found) in stamps {
                guard var entry = times[name] else { continue }
                if writtenSince(name, stamp: found, usageStamp: usageStamp) {
                    entry.saved = max(entry.saved, now)
                    entry.used = max(entry.used, now)
                }
                entry.file = FileMark(found)
                times[name] = entry
            }
        }
        let snapshot = lock.withLock { () -> [String: Times] in
            changed = false
            filesWritten = false
            ownWrites = [:]
            return times
        }
        let kept = snapshot.filter { keep($0.key) }
        do {
            // Written now, even unchanged: a sweep counts message files written after it as just used.
            if try file.write(Self.encode(kept), synchronized: synchronized) == .unchanged {
                try FileSystem.markModified(at: file.path)
            }
        } catch {
            lock.withLock { (changed, filesWritten) = (true, true) }
            throw error
        }
    }

    /// The times in `file`; empty when it is missing or damaged (reported to `logger`).
    static func read(_ file: RecordFile, logger: Logger) throws(FlatCacheError) -> [String: Times] {
        switch try file.read(finishing: false) {
        case .missing:
            return [:]
        case .corrupt(let problem):
            damaged(problem.description, logger)
            return [:]
        case .records(let lines):
            guard lines.appended.isEmpty else {
                damaged(Corruption.appendedLinesNotAllowed.description, logger)
                return [:]
            }
            var found = [String: Times]()
            for line in lines.records {
                guard let (name, entry) = decode(line) else {
                    damaged("a line of \(line.count) bytes is not a usage record", logger)
                    return [:]
                }
                found[name] = entry
            }
            return found
        }
    }

    /// Reports a damaged `usage.lines`: the times in it are lost (channels
    /// then count as used when their files were last written), nothing else.
    private static func damaged(_ problem: String, _ logger: Logger) {
        logger.warning("FlatCache found usage.lines damaged; it starts afresh", metadata: ["problem": "\(problem)"])
    }

    /// The records of `times`, in the order of their message files' names.
    static func encode(_ times: [String: Times]) -> [Data] {
        times.keys.sorted().compactMap { name in
            guard name.hasSuffix(".lines"), let key = SHA256Digest(hex: Array(name.utf8.dropLast(6))),
                let entry = times[name]
            else { return nil }
            var writer = BinaryWriter(capacity: recordSize + fileMarkSize)
            writer.write(entry.file == nil ? recordVersion : recordVersionWithFile)
            for byte in key.bytes { writer.write(byte) }
            writer.write(entry.saved)
            writer.write(entry.used)
            if let file = entry.file {
                writer.write(Int64(bitPattern: file.inode))
                writer.write(file.size)
                writer.write(file.modified)
            }
            return writer.data
        }
    }

    /// A record's message file name and times, or `nil` when it is not one.
    static func decode(_ record: Data) -> (String, Times)? {
        try? BinaryReader.read(record) { (reader: inout BinaryReader) throws(RecordDecodingError) -> (String, Times) in
            let version = try reader.readByte()
            guard version == recordVersion || version == recordVersionWithFile else {
                throw RecordDecodingError(reason: "usage record version \(version) is not 1 or 2")
            }
            var key = [UInt8]()
            key.reserveCapacity(SHA256Digest.byteCount)
            for _ in 0..<SHA256Digest.byteCount { key.append(try reader.readByte()) }
            let saved = try reader.readInt64()
            let used = try reader.readInt64()
            var file: FileMark?
            if version == recordVersionWithFile {
                let inode = UInt64(bitPattern: try reader.readInt64())
                file = FileMark(inode: inode, size: try reader.readInt64(), modified: try reader.readInt64())
            }
            return (SHA256Digest(bytes: key).hex + ".lines", Times(saved: saved, used: used, file: file))
        }
    }

    /// Checks `lines` as `usage.lines` must hold them (for `verify`): each a
    /// record, in ascending order of key, each key once.
    ///
    /// - Returns: How many records.
    static func check(_ lines: [Data]) throws(Corruption) -> Int {
        var previous: String?
        for (index, line) in lines.enumerated() {
            guard let (name, _) = decode(line) else {
                throw .undecodableRecord(line: index + 1, reason: "\(line.count) bytes are not a usage record")
            }
            if let previous, previous >= name {
                throw .undecodableRecord(line: index + 1, reason: "its key is not above the previous line's")
            }
            previous = name
        }
        return lines.count
    }

    /// A record: its version, the message file's key (32 bytes), the two times;
    /// version 2 adds the message file's ``FileMark`` (inode, size, modification time).
    static let recordSize = 1 + SHA256Digest.byteCount + 8 + 8
    static let fileMarkSize = 8 + 8 + 8
    static let recordVersion: UInt8 = 1
    static let recordVersionWithFile: UInt8 = 2
}
