import Foundation

/// A flag that closures set from any thread, and that stays set: a change's
/// "retention voided the attachment", a search's "the caller cancelled".
final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false  // guarded by `lock`

    /// Sets it, for good.
    func set() { lock.withLock { value = true } }
    /// Whether it was set.
    var isSet: Bool { lock.withLock { value } }
}
