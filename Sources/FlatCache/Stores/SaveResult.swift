/// What a save did: files written, found unchanged or scheduled for
/// write-behind, and records the caching rules kept out.
///
/// A blocking save (``MessageStore/blocking``) writes its files before it
/// returns: they are counted as written or unchanged. An `async` save
/// returns once memory holds its change: each file it changed is counted in
/// ``filesScheduled``, and ``ChatCache/flush()`` (or the write-behind flush,
/// within ``Configuration/writeDelay``) writes it. With a `writeDelay` of
/// zero, or the ``CacheTier/disk`` tier, the `async` save writes before it
/// returns and counts as the blocking one does (with a delay of zero, every
/// file that its flush wrote, other saves' waiting changes included). A
/// ``CacheTier/memory`` save counts no file.
///
/// ```swift
/// let result = try await cache.messages.save(fetched)
/// print(result.filesScheduled, result.recordsLeftOut)   // 1 0: written within writeDelay
/// ```
public struct SaveResult: Sendable, Hashable, CustomStringConvertible {
    /// Files replaced because their content changed.
    public var filesWritten = 0
    /// Files left alone because they already held exactly these bytes.
    public var filesUnchanged = 0
    /// Files whose change waits for write-behind: not on disk yet when the
    /// save returned (``ChatCache/flush()`` writes them, and counts them).
    public var filesScheduled = 0
    /// Records never cached by rule: unsent messages (id 0), open channels and their messages.
    public var recordsLeftOut = 0
    /// Older messages dropped to keep each channel within
    /// ``Configuration/maxMessagesPerChannel``, counted when the file is
    /// written: a scheduled file's by ``ChatCache/flush()`` when that flush is the one that writes it.
    public var recordsDropped = 0

    /// A result with the given counts, zero by default.
    public init(
        filesWritten: Int = 0, filesUnchanged: Int = 0, filesScheduled: Int = 0, recordsLeftOut: Int = 0,
        recordsDropped: Int = 0
    ) {
        self.filesWritten = filesWritten
        self.filesUnchanged = filesUnchanged
        self.filesScheduled = filesScheduled
        self.recordsLeftOut = recordsLeftOut
        self.recordsDropped = recordsDropped
    }

    /// Whether any file was written.
    public var wroteFiles: Bool { filesWritten > 0 }

    /// A short summary, such as `1 file written, 2 unchanged, 1 left out, 0 dropped`;
    /// with files scheduled, `0 files written, 0 unchanged, 2 scheduled, 1 left out, 0 dropped`.
    public var description: String {
        "\(filesWritten) file\(filesWritten == 1 ? "" : "s") written, \(filesUnchanged) unchanged, "
            + (filesScheduled > 0 ? "\(filesScheduled) scheduled, " : "")
            + "\(recordsLeftOut) left out, \(recordsDropped) dropped"
    }

    /// The counts of two saves added up.
    ///
    /// ```swift
    /// var total = SaveResult()
    /// for url in urls { total += try await cache.messages.replace(fresh[url] ?? [], in: url) }
    /// ```
    public static func + (lhs: SaveResult, rhs: SaveResult) -> SaveResult {
        var sum = lhs
        sum += rhs
        return sum
    }

    /// Adds the counts of `rhs` to `lhs`.
    public static func += (lhs: inout SaveResult, rhs: SaveResult) {
        lhs.filesWritten += rhs.filesWritten
        lhs.filesUnchanged += rhs.filesUnchanged
        lhs.filesScheduled += rhs.filesScheduled
        lhs.recordsLeftOut += rhs.recordsLeftOut
        lhs.recordsDropped += rhs.recordsDropped
    }

    /// Counts a write's outcome; `nil` (nothing written, the file stays absent) counts as neither.
    mutating func count(_ outcome: RecordFile.WriteOutcome?) {
        switch outcome {
        case .written?: filesWritten += 1
        case .unchanged?: filesUnchanged += 1
        case nil: break
        }
    }
}
