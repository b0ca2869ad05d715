import Foundation

/// The data files this process has checked against their sidecars, with
/// both files' stamps as they were then: while neither stamp changes, the
/// data file holds the bytes that were checked, and reading it again needs
/// no SHA256. Kept in memory only; every cache on every folder shares it,
/// by path. Holds a few thousand files; past that it starts again.
///
/// A stamp changes with every write, by anyone, in any process: a replace
/// makes another inode, and any write moves the change time (`ctime`),
/// which no program can set back (see ``FileStamp``). But the file
/// system's clock ticks coarsely (milliseconds; a second or two on some
/// file systems), so a write in the very tick the file was last changed
/// could leave its change time as it was. A check therefore counts only
/// when both files were last changed at least ``settledAfter`` before it
/// began: any later write then gives a later change time.
final class VerifiedFiles: @unchecked Sendable {
    /// The one table of the process.
    static let shared = VerifiedFiles()

    /// What a check proved of one data file.
    struct Proof: Sendable {
        /// The data file's stamp when its bytes were checked.
        let data: FileStamp
        /// Its sidecar's stamp then.
        let sidecar: FileStamp
        /// SHA256 over those bytes, to go on with when lines are appended.
        let hasher: SHA256Hasher
    }

    /// How long before a check both files must have been last changed for it to count.
    static let settledAfter: Double = 2

    // Lock rule (docs/reliability.md, "Liveness"): held only to read or change the fields it guards;
    // nothing is resumed, yielded or called out while it is held.
    private let lock = NSLock()
    private var proofs = [String: Proof]()  // guarded by `lock`

    /// The time to pass to ``remember(_:_:checkStarted:)``: now, in seconds since 1970.
    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// Remembers that the data file at `path` matched its sidecar, as
    /// `proof` describes, in a check that began at `checkStarted` (see
    /// ``now()``); nothing when either file changed too recently to tell a
    /// later write by its stamp.
    func remember(_ path: String, _ proof: Proof, checkStarted: Double) {
        let settled = checkStarted - Self.settledAfter
        guard Self.seconds(proof.data.changed) < settled, Self.seconds(proof.sidecar.changed) < settled else { return }
        lock.withLock {
            if proofs.count >= 4_096 { proofs.removeAll(keepingCapacity: true) }
            proofs[path] = proof
        }
    }

    /// What a check proved of the data file at `path`, if one did; its
    /// stamps are to be compared with the files' stamps now.
    func proof(for path: String) -> Proof? {
        lock.withLock { proofs[path] }
    }

    private static func seconds(_ time: FileStamp.Timestamp) -> Double {
        Double(time.seconds) + Double(time.nanoseconds) / 1e9
    }
}
