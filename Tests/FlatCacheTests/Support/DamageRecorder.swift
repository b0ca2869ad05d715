import FlatCache
import Foundation

/// Collects what a cache passes to ``Configuration/onDamagedFile``.
final class DamageRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var recorded = [DamagedFile]()

    /// Every report so far.
    var files: [DamagedFile] { lock.withLock { recorded } }

    /// A configuration that reports into this recorder (and logs nowhere).
    func configuration(readOnly: Bool = false) -> Configuration {
        Configuration(logger: LogRecorder().logger, readOnly: readOnly, onDamagedFile: { file in
            self.lock.withLock { self.recorded.append(file) }
        })
    }
}
