import Foundation

/// Runs blocking work (waiting for a child process, sleeping between kills)
/// on a thread of its own and awaits it, so that a long process-driven test
/// never holds one of the cooperative pool's few threads: tests that measure
/// the pool's progress (`LockWaitTests`) run beside it.
func offThePool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try work() }) }.start()
    }
}
