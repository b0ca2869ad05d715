import Foundation

/// What the cache knows of a channel beyond its messages: the time ranges in
/// which it holds every message the server has, and the change log token it
/// is in sync with. A ``MessageCollection`` pages from the cache only inside
/// a complete range, so it never skips a hole the cache does not know about.
///
/// Kept in the channel's `messages/<key>.continuity` file (see
/// `docs/format.md`), which goes whenever the channel's messages are
/// removed, evicted, expired, replaced whole or moved aside as damaged.
/// Nothing is known of a channel cached by plain saves, or by a FlatCache
/// that predates the file.
///
/// ```swift
/// let continuity = try await cache.messages.continuity(in: channelURL)
/// if continuity.completeRange(containing: 1_700_000_000_000) != nil { print("no hole there") }
/// ```
public struct ChannelContinuity: Sendable, Hashable {
    /// The lower bound of a range that starts at the channel's first message.
    public static let channelStart = Int64.min

    /// Ranges of `createdAt` (milliseconds since 1970, both ends included)
    /// in which every message the server had when it answered is cached;
    /// ascending, neither overlapping nor touching. A range starting at
    /// ``channelStart`` reaches back to the channel's first message.
    public private(set) var completeRanges: [ClosedRange<Int64>]
    /// The change log token the cached messages are in sync with, when known.
    public var changeLogToken: String?

    /// Continuity with `completeRanges` (in any order; overlapping or touching ones are merged).
    ///
    /// - Parameters:
    ///   - completeRanges: Ranges known complete.
    ///   - changeLogToken: The change log token, or `nil`.
    public init(completeRanges: [ClosedRange<Int64>] = [], changeLogToken: String? = nil) {
        self.completeRanges = []
        self.changeLogToken = changeLogToken
        for range in completeRanges { insert(range) }
    }

    /// The complete range that contains `timestamp`, if any.
    ///
    /// - Parameter timestamp: Milliseconds since 1970.
    /// - Returns: The range, or `nil` when nothing is known complete there.
    public func completeRange(containing timestamp: Int64) -> ClosedRange<Int64>? {
        completeRanges.first { $0.contains(timestamp) }
    }

    /// Marks `range` complete, merged with the ranges it overlaps or touches.
    ///
    /// - Parameter range: Milliseconds since 1970, both ends included.
    public mutating func insert(_ range: ClosedRange<Int64>) {
        var merged = range
        var kept = [ClosedRange<Int64>]()
        for existing in completeRanges {
            if Self.joins(existing, merged) {
                merged = min(existing.lowerBound, merged.lowerBound)...max(existing.upperBound, merged.upperBound)
            } else {
                kept.append(existing)
            }
        }
        kept.append(merged)
        completeRanges = kept.sorted { $0.lowerBound < $1.lowerBound }
    }

    /// Keeps of every range only the times after `timestamp`: what retention
    /// leaves known when it may have dropped messages created at or before it.
    ///
    /// - Parameter timestamp: Milliseconds since 1970.
    public mutating func forget(through timestamp: Int64) {
        completeRanges = completeRanges.compactMap { range in
            guard range.lowerBound <= timestamp else { return range }
            let (next, overflow) = timestamp.addingReportingOverflow(1)
            guard !overflow, next <= range.upperBound else { return nil }
            return next...range.upperBound
        }
    }

    /// Whether two ranges overlap or touch (no whole millisecond between them).
    private static func joins(_ a: ClosedRange<Int64>, _ b: ClosedRange<Int64>) -> Bool {
        let (low, high) = a.lowerBound <= b.lowerBound ? (a, b) : (b, a)
        return high.lowerBound <= low.upperBound || high.lowerBound - 1 == low.upperBound
    }
}

/// A continuity file's one record: the continuity, and the channel's oldest
/// message when it was written. A later reader that finds another oldest
/// message knows retention (or another writer) may have dropped messages,
/// and keeps of the ranges only what lies after the oldest one now.
struct ContinuityRecord: Hashable {
    /// The oldest cached message's creation time and id digest.
    struct Anchor: Hashable {
        var createdAt: Int64
        /// The first 8 bytes of the SHA256 of the id's text, little-endian: stable across launches.
        var id: Int64

        init<M: MessageRecord>(_ message: M) {
            createdAt = message.createdAt
            let digest = SHA256Digest(of: Data(String(describing: message.messageID).utf8)).bytes
            id = digest.prefix(8).reversed().reduce(0) { $0 << 8 | Int64($1) }
        }

        init(createdAt: Int64, id: Int64) {
            self.createdAt = createdAt
            self.id = id
        }
    }

    var continuity: ChannelContinuity
    var anchor: Anchor?

    static let version: UInt8 = 1

    /// What `continuity` still says of `messages` (the channel's cached
    /// messages, oldest first, as they are now).
    func validated<M: MessageRecord>(against messages: [M]) -> ChannelContinuity {
        var continuity = continuity
        if let oldest = messages.first, Anchor(oldest) != anchor { continuity.forget(through: oldest.createdAt) }
        return continuity
    }

    /// The record's bytes: version, flags (1: an anchor, 2: a token), the
    /// anchor's time and id digest, the token, the range count, and each
    /// range's two ends (see `docs/format.md`).
    func serialize() throws(FlatCacheError) -> Data {
        var writer = BinaryWriter(capacity: 32 + continuity.completeRanges.count * 16)
        writer.write(Self.version)
        writer.write(UInt8((anchor == nil ? 0 : 1) | (continuity.changeLogToken == nil ? 0 : 2)))
        writer.write(anchor?.createdAt ?? 0)
        writer.write(anchor?.id ?? 0)
        do {
            try writer.write(continuity.changeLogToken ?? "", field: "changeLogToken")
        } catch {
            throw .serializationFailed(recordType: "continuity", underlying: error)
        }
        writer.write(Int64(continuity.completeRanges.count))
        for range in continuity.completeRanges {
            writer.write(range.lowerBound)
            writer.write(range.upperBound)
        }
        return writer.data
    }

    /// Reads a record; throws on anything another writer could not have written.
    init(serializedData data: Data) throws(RecordDecodingError) {
        (continuity, anchor) = try BinaryReader.read(data) {
            (reader: inout BinaryReader) throws(RecordDecodingError) -> (ChannelContinuity, Anchor?) in
            try reader.readVersion(Self.version, of: "continuity record")
            let flags = try reader.readByte()
            guard flags <= 3 else { throw RecordDecodingError(reason: "unknown continuity flags \(flags)") }
            let anchor = Anchor(createdAt: try reader.readInt64(), id: try reader.readInt64())
            let token = try reader.readString()
            let count = try reader.readInt64()
            guard count >= 0, count <= Int64(data.count / 16) else {
                throw RecordDecodingError(reason: "a continuity record cannot hold \(count) ranges")
            }
            var ranges = [ClosedRange<Int64>]()
            for _ in 0..<count {
                let lower = try reader.readInt64()
                let upper = try reader.readInt64()
                let (before, overflow) = lower.subtractingReportingOverflow(1)
                guard lower <= upper, ranges.last.map({ !overflow && $0.upperBound < before }) ?? true else {
                    throw RecordDecodingError(reason: "continuity ranges out of order")
                }
                ranges.append(lower...upper)
            }
            return (
                ChannelContinuity(completeRanges: ranges, changeLogToken: flags & 2 != 0 ? token : nil),
                flags & 1 != 0 ? anchor : nil
            )
        }
    }

    init(continuity: ChannelContinuity, anchor: Anchor?) {
        self.continuity = continuity
        self.anchor = anchor
    }

    /// The record in `file`: `nil` when there is none, or why it cannot be
    /// trusted (its sidecar, its Base64, not one record, a bad record).
    static func read(_ file: RecordFile, finishing: Bool) throws(FlatCacheError) -> Result<ContinuityRecord?, Corruption> {
        switch try file.read(finishing: finishing) {
        case .missing:
            return .success(nil)
        case .corrupt(let corruption):
            return .failure(corruption)
        case .records(let lines):
            do throws(Corruption) {
                guard lines.appended.isEmpty else { throw .appendedLinesNotAllowed }
                return .success(try record(in: lines.records))
            } catch {
                return .failure(error)
            }
        }
    }

    /// The one record a continuity file's `lines` must hold.
    static func record(in lines: [Data]) throws(Corruption) -> ContinuityRecord {
        guard lines.count == 1 else { throw .undecodableRecord(line: 1, reason: "\(lines.count) records, not 1") }
        do {
            return try ContinuityRecord(serializedData: lines[0])
        } catch {
            throw .undecodableRecord(line: 1, reason: error.reason)
        }
    }
}
