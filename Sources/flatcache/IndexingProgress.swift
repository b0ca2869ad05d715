import FlatCache
import Foundation

/// Builds a cache's search index, showing "indexing channels N/TOTAL" on
/// standard error while it takes long (a large cache), on a terminal only.
enum IndexingProgress {
    /// How long a build runs before its progress is shown: a small cache's build says nothing.
    static let quietFor = DispatchTimeInterval.milliseconds(500)

    /// Builds the index of `search` and waits for it, showing progress meanwhile (see ``IndexingProgress``).
    ///
    /// - Throws: What ``MessageSearch/Blocking/prepare()`` throws.
    static func prepare(_ search: MessageSearch<ChatMessage>.Blocking) throws(FlatCacheError) {
        guard isatty(STDERR_FILENO) == 1 else {
            try search.prepare()
            return
        }
        let (stop, stopped) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        let shown = ShownFlag()
        // Another thread asks how far the build is; the index answers between its steps.
        Thread.detachNewThread {
            while stop.wait(timeout: .now() + quietFor) == .timedOut {
                guard let progress = try? search.progress(), !progress.isComplete else { continue }
                shown.set()
                line("indexing channels \(progress.indexedChannels)/\(progress.channelCount)")
            }
            stopped.signal()
        }
        let result = Result { () throws(FlatCacheError) in try search.prepare() }
        stop.signal()
        stopped.wait()
        // The line ends here, so that what follows starts on a line of its own.
        if shown.isSet, let done = try? result.get() { line("indexed channels \(done.channelCount)/\(done.channelCount)\n") }
        _ = try result.get()
    }

    /// `text` over the last progress line.
    private static func line(_ text: String) {
        FileHandle.standardError.write(Data("\r\u{1B}[K\(text)".utf8))
    }

    /// Whether a progress line was shown, set by the thread that shows it.
    private final class ShownFlag: @unchecked Sendable {
        // Held only to read or write `value`.
        private let lock = NSLock()
        private var value = false

        var isSet: Bool { lock.withLock { value } }
        func set() { lock.withLock { value = true } }
    }
}
