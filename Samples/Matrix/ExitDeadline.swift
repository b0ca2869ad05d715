#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// The bound on how long the tool takes to stop, kept by force: once armed,
/// the process exits with status 3 after that many seconds, whatever is
/// still running (a request stuck in the network stack, a collection that
/// does not dispose). By then every save is on disk (an `async` save waits
/// the cache's write delay, 100 ms by default, and the folder survives being
/// killed at any point), and the outbox is written before anything is sent:
/// what was not sent stays queued for the next run.
enum ExitDeadline {
    /// How long stopping may take: disposing collections and the outbox's delivery, and closing the cache.
    static let stopping = 10

    /// Exits with status 3 in `seconds` unless the process ended before. It
    /// runs on a thread of its own, not the Swift concurrency pool, which a
    /// stuck task could hold.
    static func arm(_ seconds: Int, while doing: String) {
        let thread = Thread {
            Thread.sleep(forTimeInterval: Double(seconds))
            FileHandle.standardError.write(Data("\(doing) did not end within \(seconds) s; exiting\n".utf8))
            fflush(nil)  // every stream: what was printed stays printed
            _exit(3)
        }
        thread.name = "ExitDeadline"
        thread.start()
    }
}
