import FlatCache
import Foundation

/// What the helper's `flush-churn` command printed before it was killed
/// (see `Tests/Helpers/TestHelper/FlushChurn.swift`): the operations it
/// started, in order, and how many of them its last returned `flush()` covered.
struct FlushReport {
    enum Kind: String {
        case save, replace, log, remove
    }

    /// One operation on one channel; every message in it is
    /// ``FlushModel/message(channel:id:version:)`` with its `version`.
    struct Operation: Equatable {
        let kind: Kind
        let channel: Int
        let version: Int64
        /// The messages saved, replaced with, or updated by a change log.
        let ids: [Int64]
        /// The ids a change log deletes.
        let deleted: [Int64]
    }

    /// Every operation the helper started, in order (the last may have been cut by the kill).
    private(set) var operations = [Operation]()
    /// Operations `0..<flushed` were on disk when the last `flush()` returned.
    private(set) var flushed = 0
    /// How many `flush()` calls returned.
    private(set) var flushes = 0

    struct BadLine: Error, CustomStringConvertible {
        let number: Int
        let line: Substring
        var description: String { "line \(number) of the helper's output is not what flush-churn prints: \(line)" }
    }

    /// Parses the complete lines of `output`; a last line without its `\n`
    /// was cut by the kill and is left out.
    init(_ output: Data) throws(BadLine) {
        let lines = String(decoding: output, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        for (index, line) in lines.dropLast().enumerated() {
            guard parse(line) else { throw BadLine(number: index + 1, line: line) }
        }
    }

    private mutating func parse(_ line: Substring) -> Bool {
        let fields = line.split(separator: " ", omittingEmptySubsequences: false)
        switch (fields.first, fields.count) {
        case ("op", 7):
            guard Int(fields[1]) == operations.count, let kind = Kind(rawValue: String(fields[2])),
                let channel = Int(fields[3]), (0..<FlushModel.channelCount).contains(channel),
                let version = Int64(fields[4]), let ids = Self.ids(fields[5]), let deleted = Self.ids(fields[6])
            else { return false }
            operations.append(Operation(kind: kind, channel: channel, version: version, ids: ids, deleted: deleted))
            return true
        case ("flushed", 2):
            guard let count = Int(fields[1]), (flushed...operations.count).contains(count) else { return false }
            flushed = count
            flushes += 1
            return true
        default:
            return false
        }
    }

    private static func ids(_ field: Substring) -> [Int64]? {
        if field == "-" { return [] }
        let ids = field.split(separator: ",", omittingEmptySubsequences: false).compactMap { Int64($0) }
        return ids.count == field.split(separator: ",", omittingEmptySubsequences: false).count ? ids : nil
    }
}
