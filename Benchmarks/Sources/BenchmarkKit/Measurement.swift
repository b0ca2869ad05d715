import Foundation

/// Repeated timings of one thing, in seconds.
package struct Samples: Sendable {
    package var seconds: [Double] = []
    /// Bytes written during each timed call (``WrittenBytes``), in step with
    /// `seconds`; empty where the system does not count them.
    package var bytesWritten: [Int] = []

    package init(seconds: [Double] = []) { self.seconds = seconds }

    /// The median of `bytesWritten`, or `nil` when nothing was counted.
    package var medianBytesWritten: Int? {
        let sorted = bytesWritten.sorted()
        guard !sorted.isEmpty else { return nil }
        return sorted[sorted.count / 2]
    }

    package var median: Double {
        let sorted = seconds.sorted()
        guard !sorted.isEmpty else { return .nan }
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    package var min: Double { seconds.min() ?? .nan }
    package var max: Double { seconds.max() ?? .nan }

    /// "12.3 ms (11.9–13.0)": median, then min–max.
    package var summary: String { "\(Self.format(median)) (\(Self.format(min, unit: false))–\(Self.format(max, unit: false)))" }

    package static func format(_ seconds: Double, unit: Bool = true) -> String {
        let (value, suffix) = seconds >= 1 ? (seconds, "s") : seconds >= 0.001 ? (seconds * 1e3, "ms") : (seconds * 1e6, "µs")
        let digits = value >= 100 ? "%.0f" : value >= 10 ? "%.1f" : "%.2f"
        return String(format: digits, value) + (unit ? " " + suffix : "")
    }
}

/// Times `body` once, in seconds, on the monotonic clock.
package func time(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

/// Runs each contender `warmUp + rounds` times, interleaved round by round so
/// that a noisy neighbour hurts all of them alike; keeps the last `rounds`.
/// `prepare` runs untimed before each timed call. The bytes each timed call
/// writes are counted around it (nothing else prints or writes in between).
package func interleaved<Key: Hashable>(
    _ keys: [Key], warmUp: Int, rounds: Int,
    prepare: (Key, Int) throws -> Void = { _, _ in },
    _ body: (Key, Int) throws -> Void
) rethrows -> [Key: Samples] {
    var results = [Key: Samples]()
    for round in 0..<(warmUp + rounds) {
        for key in keys {
            try prepare(key, round)
            let written = WrittenBytes.current()
            let seconds = try time { try body(key, round) }
            let after = WrittenBytes.current()
            guard round >= warmUp else { continue }
            results[key, default: Samples()].seconds.append(seconds)
            if let written, let after { results[key, default: Samples()].bytesWritten.append(after - written) }
        }
    }
    return results
}

/// A process's memory use, from `/proc/self/status` (Linux); `nil` elsewhere.
package enum ProcessMemory {
    /// Current resident set size, bytes.
    package static var resident: Int? { value(of: "VmRSS") }
    /// Peak resident set size so far, bytes.
    package static var peakResident: Int? { value(of: "VmHWM") }

    private static func value(of key: String) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix(key + ":") {
            let digits = line.split(separator: " ").dropFirst().first { Int($0) != nil }
            return digits.flatMap { Int($0) }.map { $0 * 1024 }
        }
        return nil
    }
}
