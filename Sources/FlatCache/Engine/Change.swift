import Foundation

/// One change a store made to a file, kept in memory until it is written.
///
/// Changes are kept as what they do, not as the content they produce, so
/// that a write applies them to what is on disk at that moment: saves by
/// another process in between are kept, not overwritten.
struct Change<R: CacheRecord>: Sendable {
    /// The file's records after the change, given those before (`nil`: no
    /// file); counts into `dropped` the records retention left out.
    let apply: @Sendable (_ records: [R]?, _ dropped: inout Int) -> [R]?
    /// When the change only adds records, these (in file order) and their
    /// serialized bytes: a write may then append their lines instead of
    /// rewriting the file, when ``AppendRule`` allows.
    var appended: (records: [R], lines: [Data])?
    /// Whether the change ignores the records before it (a replace, a
    /// removal): then a write need not read the file.
    var replacesAll = false
}

/// When the lines of new records may be appended to a file instead of the
/// file being rewritten: the store's rule (for messages, newer than every
/// cached one, no id seen before, and room left under the retention slack).
struct AppendRule<R: CacheRecord>: Sendable {
    /// Whether `new`, in this order, may follow `existing` (the file's records, in file order).
    let allows: @Sendable (_ existing: [R], _ new: [R]) -> Bool
}
