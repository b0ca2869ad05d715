import Foundation

/// A write that only appended lines to a data file (or found it already
/// held what it was to write), told as the records its lines say: what a
/// follower of every file (the search index) learns the write from, instead
/// of reading the file again (see ``ChangeLedger``).
///
/// The file at `after` is the file at `before` with these changes applied
/// in order, as a reader applies appended lines (docs/format.md, "Appended
/// lines"): each change's upserts replace the record with their key or are
/// added, then its deletions remove the records with theirs. A follower that
/// knew the file at `before` and finds it at `after` knows it now.
struct AppendedWrite: Sendable {
    /// The data file's stamp before the lines were appended.
    let before: FileStamp
    /// Its stamp once they were.
    let after: FileStamp
    /// Each change in the order written: its upserts (an array of the file's record type) and the
    /// ids' bytes its deletions name (``MessageIDBytes``).
    let changes: [(upserts: any Sendable, deletions: [Data])]
    /// How many records and deletions the changes hold: what a ledger bounds.
    let size: Int
    /// At most how many records the file holds after the write, when the
    /// write knows: no more than a channel shows means that a load shows every one.
    var recordCount: Int?
}

extension CachedFile {
    func appendedWrite(_ staged: RecordFile.StagedWrite) -> AppendedWrite? {
        switch staged.kind {
        case .unchanged:
            // Nothing written: the file is as it was, whatever the changes said.
            return AppendedWrite(before: staged.tail.stamp, after: staged.tail.stamp, changes: [], size: 0)
        case .replace:
            return nil
        case .append:
            guard let before = staged.appendedAfter else { return nil }
            var changes = [(upserts: any Sendable, deletions: [Data])]()
            var size = 0
            for change in writing {
                guard let said = change.lineRecords else { return nil }
                changes.append((said.upserts, said.deletions))
                size += said.upserts.count + said.deletions.count
            }
            let count = appending.map { $0.onDiskCount + $0.added.count } ?? appendingBlind?.count ?? installing.records?.count
            return AppendedWrite(before: before, after: staged.tail.stamp, changes: changes, size: size, recordCount: count)
        }
    }
}
