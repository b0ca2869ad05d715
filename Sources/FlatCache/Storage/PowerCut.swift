// Debug builds only (Package.swift defines FLATCACHE_FAULTS for them), like FaultInjection.
#if FLATCACHE_FAULTS
import Foundation

/// A simulated power cut, for the tests: while armed on a folder, every
/// ``FileSystem`` call that changes a file under it first notes what the
/// disk durably holds, and every `fsync` notes what it made durable; then
/// ``cut()`` drops every write that no finished `fsync` covered.
///
/// The model, per file system object:
/// - a file's bytes (by inode) are durable as they were when armed, or at its
///   last `fsync`; a file created since holds nothing durable until one;
/// - a name's binding (which inode it names, or none) is durable as it was
///   when armed, or at the last `fsync` of its folder: a rename, a new file
///   and a removal are lost without one;
/// - folders, once made, stay (FlatCache makes `messages/` at the first
///   write and never syncs the root for it; a power cut could lose it).
///
/// It can also make the machine die at the `n`th file-system call under the
/// folder (``arm(root:dyingAfter:)``): that call and every later one fail
/// with `EIO`, as if the power went then.
enum PowerCut {
    private struct State {
        var root: String
        /// Where inodes a rename or removal would free are kept alive (hard links), so that a cut puts
        /// back the very file, inode and all, as a real one would: the journal names files by inode.
        var stash: String { root + ".power-cut" }
        /// The durable bytes of each inode changed since armed.
        var content = [UInt64: Data]()
        /// The durable binding of each name whose binding changed since armed (`nil`: no file).
        var bindings = [String: UInt64?]()
        /// Calls left before the machine dies; `nil`: it does not.
        var callsLeft: Int?
        var dead = false
    }

    // Lock rule (docs/reliability.md, "Liveness"): held only to read or change `state`, and to read the
    // files it notes (small, test-only); nothing is resumed, yielded or called out while it is held.
    private static let lock = NSLock()
    nonisolated(unsafe) private static var state: State?

    /// Starts noting writes below `root` (a canonical path); what is there now counts as durable.
    /// With `dyingAfter`, the call after that many calls under `root` fails, and every one after it.
    static func arm(root: String, dyingAfter calls: Int? = nil) {
        lock.withLock {
            state = State(root: root, callsLeft: calls)
            try? FileManager.default.createDirectory(atPath: state!.stash, withIntermediateDirectories: true)
        }
    }

    /// Whether the machine died (see ``arm(root:dyingAfter:)``).
    static var died: Bool { lock.withLock { state?.dead ?? false } }

    /// Drops every write no finished `fsync` covered, and stops: each name
    /// noted gets its durable binding and bytes back.
    static func cut() {
        guard let noted = lock.withLock({ () -> State? in defer { state = nil }; return state }) else { return }
        let manager = FileManager.default
        defer { try? manager.removeItem(atPath: noted.stash) }
        // Names first: each back to the inode it durably named (kept alive in the stash), or gone.
        for (path, inode) in noted.bindings {
            if let inode, Self.inode(of: path) == inode { continue }
            _ = unlink(path)
            guard let inode else { continue }
            if link(noted.stash + "/\(inode)", path) != 0 { try? Data().write(to: URL(fileURLWithPath: path)) }
        }
        // Then bytes, in place (the inode stays): each changed file back to what its last fsync left.
        guard let walker = manager.enumerator(atPath: noted.root) else { return }
        for case let relative as String in walker {
            let path = noted.root + "/" + relative
            guard let inode = inode(of: path), let bytes = noted.content[inode] else { continue }
            let descriptor = open(path, O_WRONLY | O_TRUNC)
            guard descriptor >= 0 else { continue }
            _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            _ = close(descriptor)
        }
    }

    /// Stops without cutting anything.
    static func disarm() {
        lock.withLock {
            if let stash = state?.stash { try? FileManager.default.removeItem(atPath: stash) }
            state = nil
        }
    }

    // MARK: - What FileSystem tells it

    /// The `errno` a call on `path` fails with because the machine died; counts the call.
    static func failure(_ path: String) -> Int32? {
        lock.withLock {
            guard state != nil, path.hasPrefix(state!.root) else { return nil }
            if state!.dead { return EIO }
            guard let left = state!.callsLeft else { return nil }
            if left <= 0 {
                state!.dead = true
                return EIO
            }
            state!.callsLeft = left - 1
            return nil
        }
    }

    /// `path`'s bytes are about to change: notes their durable form first.
    static func willChangeContent(_ path: String) {
        lock.withLock {
            guard state != nil, path.hasPrefix(state!.root), let inode = inode(of: path), state!.content[inode] == nil
            else { return }
            state!.content[inode] = (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data()
        }
    }

    /// What `path` names is about to change (created, renamed over, removed): notes its durable binding first.
    static func willChangeBinding(_ path: String) {
        lock.withLock {
            guard state != nil, path.hasPrefix(state!.root), state!.bindings[path] == nil else { return }
            let inode = inode(of: path)
            state!.bindings.updateValue(inode, forKey: path)
            if let inode {
                _ = link(path, state!.stash + "/\(inode)")
                if state!.content[inode] == nil {
                    state!.content[inode] = (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data()
                }
            }
        }
    }

    /// `path` was just created: nothing of it is durable until an `fsync`.
    static func created(_ path: String) {
        lock.withLock {
            guard state != nil, path.hasPrefix(state!.root), let inode = inode(of: path) else { return }
            state!.content[inode] = Data()
        }
    }

    /// `path`'s bytes were just synced.
    static func synchronized(_ path: String) {
        lock.withLock {
            guard state != nil, path.hasPrefix(state!.root), let inode = inode(of: path) else { return }
            state!.content[inode] = (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data()
        }
    }

    /// The folder at `path` was just synced: its names' bindings are durable as they are.
    static func synchronizedFolder(_ path: String) {
        lock.withLock {
            guard state != nil else { return }
            for name in state!.bindings.keys where FileSystem.parent(of: name) == path { state!.bindings.removeValue(forKey: name) }
        }
    }

    private static func inode(of path: String) -> UInt64? {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return nil }
        return UInt64(truncatingIfNeeded: info.st_ino)
    }
}
#endif
