import FlatCache
import Foundation

/// Collects the damaged files a cache reports, from any thread.
final class DamagedFiles: @unchecked Sendable {
    private let lock = NSLock()
    private var recorded = [DamagedFile]()

    var files: [DamagedFile] { lock.withLock { recorded } }

    func add(_ file: DamagedFile) {
        lock.withLock { recorded.append(file) }
    }
}
