@testable import FlatCache
import Foundation
import Testing

/// The threads a flush fans out to: every index runs once, as many at once as
/// asked (so `fsync`s overlap), and the threads are kept for the next call.
@Suite struct WorkerThreadsTests {
    /// Counts what bodies do, from any thread.
    final class Tally: @unchecked Sendable {
        private let lock = NSLock()
        private var runs = [Int: Int]()  // guarded by lock
        private var inside = 0  // guarded by lock
        private var mostInside = 0  // guarded by lock

        func enter(_ index: Int) {
            lock.withLock {
                runs[index, default: 0] += 1
                inside += 1
                mostInside = max(mostInside, inside)
            }
        }

        func leave() { lock.withLock { inside -= 1 } }
        var counts: [Int: Int] { lock.withLock { runs } }
        var most: Int { lock.withLock { mostInside } }
        var now: Int { lock.withLock { inside } }
    }

    @Test func everyIndexRunsOnceWhileCallsOverlap() async {
        let threads = WorkerThreads(limit: 3)
        let tallies = (0..<24).map { _ in Tally() }
        // Calls from several threads at once share the worker threads; each caller finishes its own.
        await withTaskGroup(of: Void.self) { group in
            for (call, tally) in tallies.enumerated() {
                group.addTask {
                    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                        Thread {
                            threads.forEach(50 + call, width: 4) { index in
                                tally.enter(index)
                                tally.leave()
                            }
                            done.resume()
                        }.start()
                    }
                }
            }
        }
        for (call, tally) in tallies.enumerated() {
            #expect(tally.counts == Dictionary(uniqueKeysWithValues: (0..<(50 + call)).map { ($0, 1) }))
        }
        #expect(threads.started <= 3)
    }

    /// Eight bodies that each wait until all eight have started can only
    /// finish when eight run at once: what lets a durable flush's `fsync`s overlap.
    @Test func aCallRunsAsManyBodiesAtOnceAsItsWidth() {
        let threads = WorkerThreads(limit: 8)
        let tally = Tally()
        let allIn = DispatchSemaphore(value: 0)
        threads.forEach(8, width: 8) { index in
            tally.enter(index)
            if tally.most == 8 { for _ in 0..<8 { allIn.signal() } }
            // Bounded: a pool that runs fewer at once fails the count below instead of hanging.
            _ = allIn.wait(timeout: .now() + 10)
            tally.leave()
        }
        #expect(tally.most == 8)
        #expect(tally.counts.count == 8)
    }

    @Test func aCallRunsNoMoreBodiesAtOnceThanItsWidth() {
        let threads = WorkerThreads(limit: 8)
        let tally = Tally()
        threads.forEach(200, width: 3) { index in
            tally.enter(index)
            usleep(200)
            tally.leave()
        }
        #expect(tally.most <= 3)
        #expect(tally.counts.count == 200)
    }

    /// Threads are started once and kept: later calls start none (each used
    /// to start its own, about 60 µs a thread on the benchmark's machine).
    @Test func laterCallsReuseTheThreads() {
        let threads = WorkerThreads(limit: 8)
        threads.forEach(16, width: 4) { _ in usleep(100) }
        let first = threads.started
        #expect(first >= 1 && first <= 3)
        for _ in 0..<50 { threads.forEach(16, width: 4) { _ in usleep(100) } }
        #expect(threads.started == first)
    }

    @Test func aBodyMayFanOutItself() {
        let threads = WorkerThreads(limit: 2)
        let tally = Tally()
        threads.forEach(4, width: 3) { outer in
            threads.forEach(5, width: 3) { inner in tally.enter(outer * 10 + inner); tally.leave() }
        }
        #expect(tally.counts.count == 20)
        #expect(tally.counts.values.allSatisfy { $0 == 1 })
    }
}
