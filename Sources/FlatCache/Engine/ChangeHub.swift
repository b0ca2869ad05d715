import Foundation

/// Tells observers of a cache folder's files that one changed: one hub per
/// folder in this process, shared by every ``ChatCache`` open on it, fed by
/// the engine wherever a change lands (in memory, or on disk).
///
/// A change is named by its file's path, or is "everything" (the folder was
/// emptied). Observers are ``ChangeSignal``s: a signal remembers that a
/// change came, however many, until its observer reads the value again.
/// Another process's writes reach nobody here: an observer sees them with
/// the next change made in this process.
///
/// Lock rule: the engine tells of a change while it may hold the file's
/// lock (a write settles under it), so signals are fired on the hub's own
/// queue, never on the caller's thread: no waiting task is resumed while a
/// lock is held, and `lock` itself is never held across a fire.
final class ChangeHub: @unchecked Sendable {
    private let lock = NSLock()
    /// Where signals are fired: off the caller's thread and its locks, in the order told.
    private let firing = DispatchQueue(label: "FlatCache.ChangeHub")
    // Guarded by `lock`.
    private var signals = [String: [ObjectIdentifier: ChangeSignal]]()
    private var ledgers = [ObjectIdentifier: ChangeLedger]()
    private var count = 0
    private var emptied = 0

    /// The hub of the folder at `canonicalRoot` (the path every instance on
    /// the folder spells the same way: see ``CacheLayout/root``).
    static func shared(forFolder canonicalRoot: String) -> ChangeHub {
        registryLock.withLock {
            if let hub = registry[canonicalRoot] { return hub }
            let hub = ChangeHub()
            registry[canonicalRoot] = hub
            return hub
        }
    }

    private static let registryLock = NSLock()
    // Guarded by registryLock. A few dozen bytes per folder ever opened; never freed.
    nonisolated(unsafe) private static var registry = [String: ChangeHub]()

    /// How many times every file may have changed at once (emptied, a new key) in this process:
    /// what a write of derived data taken before checks, so as not to bring back what went.
    var emptiedCount: Int { lock.withLock { emptied } }

    /// How many observers listen, over every file: 0 once every observation ended.
    var listenerCount: Int { lock.withLock { count } }

    /// A new signal for changes of the file at `path`, fired once at the start
    /// (an observation delivers the value it finds first).
    func listen(to path: String) -> ChangeSignal {
        let signal = ChangeSignal(path: path)
        lock.withLock {
            signals[path, default: [:]][ObjectIdentifier(signal)] = signal
            count += 1
        }
        return signal
    }

    /// Stops telling `signal` of changes.
    func remove(_ signal: ChangeSignal) {
        lock.withLock {
            guard signals[signal.path]?.removeValue(forKey: ObjectIdentifier(signal)) != nil else { return }
            if signals[signal.path]?.isEmpty == true { signals[signal.path] = nil }
            count -= 1
        }
    }

    /// Starts writing every change, of any file, into `ledger`.
    func listenToAll(_ ledger: ChangeLedger) {
        lock.withLock {
            guard ledgers.updateValue(ledger, forKey: ObjectIdentifier(ledger)) == nil else { return }
            count += 1
        }
    }

    /// Stops writing changes into `ledger`.
    func remove(_ ledger: ChangeLedger) {
        lock.withLock {
            guard ledgers.removeValue(forKey: ObjectIdentifier(ledger)) != nil else { return }
            count -= 1
        }
    }

    /// Whether a follower of every file listens (a ``ChangeLedger``): only
    /// then is what a write appended worth telling (``AppendedWrite``).
    var isFollowedWhole: Bool { lock.withLock { !ledgers.isEmpty } }

    /// The file at `path` changed: in memory, or on disk (by `appended`, when the write said what it appended).
    func changed(_ path: String, appended: AppendedWrite? = nil) {
        let (fired, written) = lock.withLock { () -> ([ChangeSignal], [ChangeLedger]) in
            // Costs one check when nobody observes: every save calls this.
            guard count > 0 else { return ([], []) }
            return (signals[path].map { Array($0.values) } ?? [], ledgers.isEmpty ? [] : Array(ledgers.values))
        }
        // Written on the caller's thread, before it returns: a search right after a save sees it.
        for ledger in written { ledger.record(path, appended: appended) }
        fire(fired)
    }

    /// The files at `paths` changed, those in `appended` by the lines it says.
    func changed(_ paths: [String], appended: [String: AppendedWrite] = [:]) {
        guard lock.withLock({ count > 0 }) else { return }
        for path in paths { changed(path, appended: appended[path]) }
    }

    /// Calls `body` once now, then after each change of the file at `path`
    /// (changes that come while it runs make one more call), until the task
    /// is cancelled: for a follower that reads what it needs itself.
    func follow(_ path: String, _ body: () async -> Void) async {
        let signal = listen(to: path)
        defer { remove(signal) }
        while await signal.wait() { await body() }
    }

    /// Every file may have changed (the folder was emptied).
    func changedEverything() {
        let fired = lock.withLock {
            // The ledgers first, then the count, both under the lock (a ledger's lock is a leaf):
            // a reader of the count before this sees "everything" in its ledger after it.
            for ledger in ledgers.values { ledger.recordEverything() }
            emptied += 1
            return signals.values.flatMap(\.values)
        }
        fire(fired)
    }

    private func fire(_ fired: [ChangeSignal]) {
        guard !fired.isEmpty else { return }
        firing.async { for signal in fired { signal.fire() } }
    }
}

/// The files that changed since their follower last took them: what a
/// follower of every file (the search index) reads when it next needs to be current.
///
/// Lock rule: `lock` is a leaf. The engine may write here holding a file's
/// lock, and the hub holding its own; nothing is called out under `lock`.
final class ChangeLedger: @unchecked Sendable {
    /// What changed since the last take.
    struct Changes {
        /// The files that changed.
        var paths = Set<String>()
        /// Whether every file may have changed.
        var everything = false
        /// For some of `paths`, the writes that appended to them, in order (see ``AppendedWrite``):
        /// those kept, which may not be all (a follower checks that they follow one another).
        var appended = [String: [AppendedWrite]]()
    }

    /// The most records and deletions the ledger keeps of appended writes, over
    /// every file: past it, it keeps none until the next take, and the follower
    /// reads the files (an app that saves for hours between two searches
    /// holds no more than this of what it saved).
    static var appendedLimit: Int { 4_096 }

    private let lock = NSLock()
    // Guarded by `lock`.
    private var changes = Changes()
    private var appendedSize = 0
    private var appendedOverflowed = false

    /// The file at `path` changed; by `appended`, when its write said so.
    func record(_ path: String, appended: AppendedWrite? = nil) {
        lock.withLock {
            changes.paths.insert(path)
            guard let appended, !appendedOverflowed else { return }
            // A write that left the file as the last one kept left it says nothing new.
            if appended.before == appended.after, changes.appended[path]?.last?.after == appended.after { return }
            // Each write counts one at least: writes that changed nothing are bounded too.
            appendedSize += max(1, appended.size)
            if appendedSize > Self.appendedLimit {
                (changes.appended, appendedOverflowed) = ([:], true)
            } else {
                changes.appended[path, default: []].append(appended)
            }
        }
    }

    /// Every file may have changed.
    func recordEverything() {
        lock.withLock { changes.everything = true }
    }

    /// Whether "everything changed" waits to be taken.
    var hasEverything: Bool { lock.withLock { changes.everything } }

    /// What changed since the last take, and forgets it.
    func take() -> Changes {
        lock.withLock {
            defer { (changes, appendedSize, appendedOverflowed) = (Changes(), 0, false) }
            return changes
        }
    }
}

/// What an observer waits on: whether its file changed since it last read it.
///
/// Lock rule: `lock` guards the flags and waiters only; waiters are resumed
/// after it is released (a cancelled waiter's handler takes it).
final class ChangeSignal: @unchecked Sendable {
    /// The file it listens to.
    let path: String
    private let lock = NSLock()
    // Guarded by `lock`. Fired at the start: the first wait returns at once.
    private var isFired = true
    private var isCancelled = false
    /// Waits under way: one, unless a stream is iterated from several tasks (then each wakes).
    private var waiters = [CheckedContinuation<Void, Never>]()

    /// A signal for the file at `path`, fired once already (see ``ChangeHub/listen(to:)``).
    init(path: String) {
        self.path = path
    }

    /// Records a change: wakes the waits under way, or the next wait when none is.
    func fire() {
        let woken = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            if waiters.isEmpty { isFired = true }
            defer { waiters = [] }
            return waiters
        }
        for waiter in woken { waiter.resume() }
    }

    /// Waits for a change since the last wait (returns at once when one came
    /// meanwhile, many or one); `false` when the waiting task was cancelled.
    func wait() async -> Bool {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = lock.withLock { () -> Bool in
                    guard !isFired, !isCancelled else {
                        isFired = false
                        return true
                    }
                    waiters.append(continuation)
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            cancel()
        }
        return lock.withLock { !isCancelled }
    }

    /// Ends the waits under way, and every later one, with `false`.
    private func cancel() {
        let woken = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            isCancelled = true
            defer { waiters = [] }
            return waiters
        }
        for waiter in woken { waiter.resume() }
    }
}
