import Foundation
import Logging

/// Typed, locked access to record files: the one place where records become
/// lines and back, where corrupt files are moved aside and logged, and where
/// a file's lock is held across read-modify-write.
struct RecordStorage: Sendable {
    /// Whether writes `fsync` (``Durability/synchronized``).
    let synchronized: Bool
    /// Where corrupt files go.
    let quarantine: Quarantine
    /// Where corrupt files are reported.
    let logger: Logger
    /// One lock per file (striped).
    let locks: LockStripes

    /// The records in `file`; `[]` when it is missing or corrupt (then moved aside and logged).
    func read<R: CacheRecord>(_ file: RecordFile, as type: R.Type) throws(FlatCacheError) -> [R] {
        try locks.withLock(for: file.path) { () throws(FlatCacheError) in try readLocked(file, as: type) }
    }

    /// Makes `records` the whole content of `file`, skipping the write when nothing changed.
    func replace<R: CacheRecord>(_ file: RecordFile, with records: [R]) throws(FlatCacheError) -> RecordFile.WriteOutcome {
        let lines = try serialize(records)
        return try locks.withLock(for: file.path) { () throws(FlatCacheError) in
            try file.write(lines, synchronized: synchronized)
        }
    }

    /// Reads `file`, hands its records to `transform` and writes what it returns,
    /// all under the file's lock so that concurrent updates never interleave.
    func update<R: CacheRecord>(
        _ file: RecordFile, as type: R.Type, _ transform: ([R]) throws(FlatCacheError) -> [R]
    ) throws(FlatCacheError) -> RecordFile.WriteOutcome {
        try locks.withLock(for: file.path) { () throws(FlatCacheError) in
            let updated = try transform(try readLocked(file, as: type))
            return try file.write(try serialize(updated), synchronized: synchronized)
        }
    }

    /// What `file` holds, checked like a load but moving nothing: its record
    /// count, `nil` when it does not exist, or why it cannot be trusted.
    func inspect<R: CacheRecord>(_ file: RecordFile, as type: R.Type) throws(FlatCacheError) -> Result<Int, Corruption>? {
        try locks.withLock(for: file.path) { () throws(FlatCacheError) in
            switch try file.read() {
            case .missing: return nil
            case .corrupt(let corruption): return .failure(corruption)
            case .records(let lines):
                do throws(Corruption) {
                    return .success(try decode(lines, as: type).count)
                } catch {
                    return .failure(error)
                }
            }
        }
    }

    /// Moves `file` aside as a load does when it finds it corrupt, and logs it.
    func isolate(_ file: RecordFile, because corruption: Corruption) throws(FlatCacheError) -> String {
        try locks.withLock(for: file.path) { () throws(FlatCacheError) in try quarantineAndLog(file, corruption) }
    }

    /// Removes `file` and its sidecar.
    func remove(_ file: RecordFile) throws(FlatCacheError) {
        try locks.withLock(for: file.path) { () throws(FlatCacheError) in try file.remove() }
    }

    // MARK: - Helpers

    private func readLocked<R: CacheRecord>(_ file: RecordFile, as type: R.Type) throws(FlatCacheError) -> [R] {
        let corruption: Corruption
        switch try file.read() {
        case .missing:
            return []
        case .records(let lines):
            do {
                return try decode(lines, as: type)
            } catch {
                corruption = error
            }
        case .corrupt(let found):
            corruption = found
        }
        _ = try quarantineAndLog(file, corruption)
        return []
    }

    private func quarantineAndLog(_ file: RecordFile, _ corruption: Corruption) throws(FlatCacheError) -> String {
        let incident = try quarantine.isolate(file)
        logger.warning(
            "FlatCache moved a corrupt file aside and treats it as a cache miss",
            metadata: ["file": "\(file.path)", "reason": "\(corruption)", "movedTo": "\(incident)"])
        return incident
    }

    private func decode<R: CacheRecord>(_ lines: [Data], as type: R.Type) throws(Corruption) -> [R] {
        var records = [R]()
        records.reserveCapacity(lines.count)
        for (index, line) in lines.enumerated() {
            do {
                records.append(try R(serializedData: line))
            } catch {
                throw .undecodableRecord(line: index + 1, reason: "\(error)")
            }
        }
        return records
    }

    private func serialize<R: CacheRecord>(_ records: [R]) throws(FlatCacheError) -> [Data] {
        do {
            return try records.map { try $0.serialize() }
        } catch {
            throw .serializationFailed(recordType: String(describing: R.self), underlying: error)
        }
    }
}
