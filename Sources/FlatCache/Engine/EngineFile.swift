import Foundation

/// What the engine does with one file, whatever its record type.
protocol EngineFile: AnyObject, Sendable {
    /// The file.
    var file: RecordFile { get }
    /// Whether changes wait to be written, or are being written. Engine lock held.
    var isDirty: Bool { get }
    /// The estimated bytes its records take in memory. Engine lock held.
    var cost: Int { get }
    /// When the app last used it, on the engine's clock. Engine lock held.
    var lastUse: UInt64 { get set }
    /// Forgets its records (keeps changes not yet written, and what an
    /// append needs to know of the file). Engine lock held.
    func evict()
    /// Forgets its records and everything else but changes not yet written. Engine lock held.
    func forget()
    /// Whether it holds no records in memory (see ``evict()``). Engine lock held.
    var isEvicted: Bool { get }
    /// Whether it holds memory-only changes (``CacheTier/memory``). Engine lock held.
    var hasMemoryOnlyChanges: Bool { get }
    /// When (on the engine's clock) a part of the file was last read, since its records left memory. Engine lock held.
    var readInPart: UInt64? { get set }
    /// Takes the changes waiting and stages their write. File lock held.
    func stage(in engine: CacheEngine) throws(FlatCacheError) -> StagedStep
    /// The records retention dropped in the write just staged.
    var droppedInWrite: Int { get }
    /// Records what the write left on disk (`tail`: `nil` when the file is gone). Engine lock held.
    func finish(tail: RecordFile.Tail?)
    /// What `staged`, the write of the changes being written, did to the
    /// file, when it only appended lines whose records are known (or wrote
    /// nothing); `nil` otherwise. Call before ``finish(tail:)``. Engine lock held.
    func appendedWrite(_ staged: RecordFile.StagedWrite) -> AppendedWrite?
    /// How many records the file holds with every change not yet written
    /// applied (`nil`: no file), as a load would return them; reads the file,
    /// holding its lock, when memory does not know it, and keeps nothing of
    /// that read. Blocks; call without the engine's lock.
    func recordCount(in engine: CacheEngine) throws(FlatCacheError) -> Int?
    /// After a failed write: keeps the changes for the next write, or drops
    /// them and forgets what is on disk. `staged`: whether the write took
    /// the changes waiting (else it failed before, and all of them were its). Engine lock held.
    func abandon(keepingChanges: Bool, staged: Bool)
}

/// What a flush does to one file.
enum StagedStep: Sendable {
    /// No change was waiting (another write took them).
    case noChanges
    /// The changes leave no file, and there is none.
    case nothing
    /// The changes leave no file: remove it.
    case remove
    /// Write (or append) as staged.
    case write(RecordFile.StagedWrite)
}
