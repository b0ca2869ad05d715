import Foundation
import Testing

@testable import FlatCache

/// `LatestWork`: work asked while the last still waits takes its place; work
/// asked once the last started runs after it.
@Suite struct LatestWorkTests {
    final class Log: @unchecked Sendable {
        private let lock = NSLock()
        private var ran = [Int]()
        func append(_ number: Int) { lock.withLock { ran.append(number) } }
        var numbers: [Int] { lock.withLock { ran } }
    }

    @Test func workAskedWhileTheLastWaitsTakesItsPlace() {
        let queue = DispatchQueue(label: "LatestWorkTests")
        let (latest, log) = (LatestWork(on: queue), Log())
        queue.suspend()
        for number in 1...3 { latest.run { log.append(number) } }
        queue.resume()
        queue.sync {}
        #expect(log.numbers == [3])
    }

    @Test func workAskedOnceTheLastStartedRunsAfterIt() {
        let queue = DispatchQueue(label: "LatestWorkTests")
        let (latest, log) = (LatestWork(on: queue), Log())
        let started = DispatchSemaphore(value: 0)
        let finish = DispatchSemaphore(value: 0)
        latest.run {
            started.signal()
            finish.wait()
            log.append(1)
        }
        started.wait()
        latest.run { log.append(2) }
        latest.run { log.append(3) }
        finish.signal()
        queue.sync {}
        #expect(log.numbers == [1, 3])
    }
}
