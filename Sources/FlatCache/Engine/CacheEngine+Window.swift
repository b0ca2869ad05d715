import Foundation

/// A part of a file's records, such as a page of messages, read without
/// decoding the whole file when it is not in memory.
extension CacheEngine {
    /// Picks the records a call wants: given how many there are and a way
    /// to get the record at an index (in file order), returns the range of
    /// indices to return. Looks at few records (a binary search), so that
    /// a file read from disk decodes only those.
    typealias Selection<R> = @Sendable (_ count: Int, _ record: (Int) throws(Corruption) -> R) throws(Corruption) -> Range<Int>

    /// The records `select` picks from the last `keep` records of `file`
    /// (all of them with every change applied, as a load returns them).
    ///
    /// From memory when it holds the file. The first time a file is wanted
    /// while none of its records is in memory, it is read and its digest
    /// checked whole, but only the lines `select` looks at are decoded
    /// (Base64, then record), and none is kept; a call about the same file
    /// soon after (see ``isFirstTouch(_:rule:)``) reads and keeps the whole file. A line that does not decode makes the whole
    /// file read as by a load: damaged, reported, a miss.
    ///
    /// Blocks: call it from ``readQueue`` (or a thread that may block).
    func window<R: CacheRecord>(
        _ file: RecordFile, rule: AppendRule<R>?, keeping keep: Int, tier: CacheTier = .memoryAndDisk, select: Selection<R>
    ) throws(FlatCacheError) -> [R] {
        switch tier {
        case .memory:
            return Self.window(try memoryOnlyRecords(file) ?? [], keeping: keep, select)
        case .disk:
            try writeWaitingChanges(file)
            let part = try storage.withLock(file) { () throws(FlatCacheError) in
                try partialRead(file, keep, select, ignoringMemoryOnly: true)
            }
            if let part { return part }
            return Self.window(try diskRecords(file, as: R.self) ?? [], keeping: keep, select)
        case .memoryAndDisk:
            break
        }
        if case .some(let hit) = try memoryHit(file, as: R.self) { return Self.window(hit ?? [], keeping: keep, select) }
        // Remembered from now on, so that the next call reads the whole file and keeps it.
        if isFirstTouch(file, rule: rule), let found = try storage.withLock(file, { () throws(FlatCacheError) in try partialRead(file, keep, select) }) {
            return found
        }
        return Self.window(try records(file, rule: rule) ?? [], keeping: keep, select)
    }

    /// ``window(_:rule:keeping:select:)`` for `async` callers: a memory hit on the
    /// caller's thread, a read on ``readQueue``.
    func window<R: CacheRecord>(
        _ file: RecordFile, rule: AppendRule<R>?, keeping keep: Int, tier: CacheTier = .memoryAndDisk,
        select: @escaping Selection<R>
    ) async throws(FlatCacheError) -> [R] {
        if tier == .memory { return Self.window(try memoryOnlyRecords(file) ?? [], keeping: keep, select) }
        if tier == .memoryAndDisk, case .some(let hit) = try memoryHit(file, as: R.self) {
            return Self.window(hit ?? [], keeping: keep, select)
        }
        return try await BlockingWork.run(on: readQueue) { () throws(FlatCacheError) in
            try self.window(file, rule: rule, keeping: keep, tier: tier, select: select)
        }
    }

    /// `select` on records in memory.
    @_specialize(where R == ChatMessage)
    private static func window<R>(_ records: [R], keeping keep: Int, _ select: Selection<R>) -> [R] {
        let kept = records.suffix(keep)
        let range = Self.never { () throws(Corruption) in try select(kept.count) { kept[kept.startIndex + $0] } }
        return Array(kept[(kept.startIndex + range.lowerBound)..<(kept.startIndex + range.upperBound)])
    }

    /// `select` on the file as read now, decoding only what it looks at; `nil`
    /// when that cannot answer (a damaged file, a record that does not
    /// decode, changes waiting in memory): the caller then reads the whole
    /// file as a load does. File lock held.
    private func partialRead<R: CacheRecord>(
        _ file: RecordFile, _ keep: Int, _ select: Selection<R>, ignoringMemoryOnly: Bool = false
    ) throws(FlatCacheError) -> [R]? {
        guard !hasChangesWaiting(file, ignoringMemoryOnly: ignoringMemoryOnly) else { return nil }
        let (found, _) = try file.verify(finishing: !storage.isReadOnly, withTail: false)
        // A page answered from the file is a load that read the disk, as a whole read is.
        let memoryMissed = !ignoringMemoryOnly
        switch found {
        case .missing:
            locked {
                if memoryMissed { counts.memoryMisses += 1 }
                counts.diskMisses += 1
            }
            return []
        case .corrupt: return nil
        case .body(let body):
            // Appended lines (format 2) may edit or delete any record: the whole file is read then.
            guard let lines = try? RecordLines.lineRanges(body), !RecordLines.endsWithAppended(body, lines: lines) else {
                return nil
            }
            let kept = lines.suffix(keep)
            // One cipher for every line this read opens, not one per line.
            let opener = file.sealer.map { Sealer.LineOpener($0, fileName: file.name) }
            func decode(_ index: Int) throws(Corruption) -> R {
                let number = kept.startIndex + index + 1
                let bytes = try RecordLines.decodeLine(
                    body, in: kept[kept.startIndex + index], number: number, opener: opener)
                do {
                    return try R(serializedData: bytes)
                } catch {
                    throw .undecodableRecord(line: number, reason: "\(error)")
                }
            }
            // The records the search looked at: a binary search's handful, so two lists, not a
            // dictionary (and the indices apart, so that looking one up copies no record).
            var probedIndices = [Int]()
            var probedRecords = [R]()
            func record(_ index: Int) throws(Corruption) -> R {
                if let known = probedIndices.firstIndex(of: index) { return probedRecords[known] }
                let found = try decode(index)
                probedIndices.append(index)
                probedRecords.append(found)
                return found
            }
            do throws(Corruption) {
                let range = try select(kept.count, record)
                var page = [R]()
                page.reserveCapacity(range.count)
                for index in range {
                    if let known = probedIndices.firstIndex(of: index) {
                        page.append(probedRecords[known])
                    } else {
                        page.append(try decode(index))
                    }
                }
                locked {
                    if memoryMissed { counts.memoryMisses += 1 }
                    counts.diskHits += 1
                }
                return page
            } catch {
                return nil
            }
        }
    }

    /// Runs `body`, which cannot throw with the arguments it is given.
    private static func never<T>(_ body: () throws(Corruption) -> T) -> T {
        do { return try body() } catch { preconditionFailure("a record in memory failed to decode: \(error)") }
    }
}
