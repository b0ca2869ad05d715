import Foundation

/// Holds callers of ``pass()`` until ``open()``.
actor Gate {
    private(set) var wasAsked = false
    private var isOpen = false
    private var waiting = [CheckedContinuation<Void, Never>]()

    func pass() async {
        wasAsked = true
        guard !isOpen else { return }
        await withCheckedContinuation { waiting.append($0) }
    }

    func open() {
        isOpen = true
        for continuation in waiting { continuation.resume() }
        waiting = []
    }
}

/// A flag set once, read from anywhere.
final class Flag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}
