/// What a save did: files written or found unchanged, and records the
/// caching rules kept out.
///
/// ```swift
/// let result = try cache.messages.save(fetched)
/// if result.filesUnchanged > 0 { print("nothing new for \(result.filesUnchanged) channel(s)") }
/// ```
public struct SaveResult: Sendable, Hashable, CustomStringConvertible {
    /// Files replaced because their content changed.
    public var filesWritten = 0
    /// Files left alone because they already held exactly these bytes.
    public var filesUnchanged = 0
    /// Records never cached by rule: unsent messages (id 0), open channels and their messages.
    public var recordsLeftOut = 0
    /// Older messages dropped to keep each channel within ``Configuration/maxMessagesPerChannel``.
    public var recordsDropped = 0

    /// A result with the given counts, zero by default.
    public init(filesWritten: Int = 0, filesUnchanged: Int = 0, recordsLeftOut: Int = 0, recordsDropped: Int = 0) {
        self.filesWritten = filesWritten
        self.filesUnchanged = filesUnchanged
        self.recordsLeftOut = recordsLeftOut
        self.recordsDropped = recordsDropped
    }

    /// Whether any file was written.
    public var wroteFiles: Bool { filesWritten > 0 }

    /// A short summary, such as `1 file written, 2 unchanged, 1 left out, 0 dropped`.
    public var description: String {
        "\(filesWritten) file\(filesWritten == 1 ? "" : "s") written, \(filesUnchanged) unchanged, "
            + "\(recordsLeftOut) left out, \(recordsDropped) dropped"
    }

    /// The counts of two saves added up.
    ///
    /// ```swift
    /// var total = SaveResult()
    /// for url in urls { total += try cache.messages.replace(fresh[url] ?? [], in: url) }
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
