import Foundation
import Logging

/// Collects what FlatCache logs, so tests can check that a problem was reported.
final class LogRecorder: @unchecked Sendable {
    struct Entry: Sendable {
        let level: Logger.Level
        let message: String
        let metadata: [String: String]
    }

    private let lock = NSLock()
    private var recorded = [Entry]()

    /// Everything logged so far.
    var entries: [Entry] { lock.withLock { recorded } }

    /// A logger that writes into this recorder.
    var logger: Logger {
        Logger(label: "FlatCacheTests") { _ in Handler(recorder: self) }
    }

    fileprivate func append(_ entry: Entry) {
        lock.withLock { recorded.append(entry) }
    }

    private struct Handler: LogHandler {
        let recorder: LogRecorder
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { $1 }
            recorder.append(Entry(
                level: event.level, message: "\(event.message)",
                metadata: all.mapValues { "\($0)" }))
        }
    }
}
