import Foundation

/// Draws ranks 0..<count with Zipf–Mandelbrot frequencies: rank `r` in
/// proportion to 1 / (r + offset)^exponent, so a few words are everywhere and
/// most are rare, as in any language's text.
struct ZipfSampler {
    /// The running sums of the weights, the last one 1.
    private let cumulative: [Double]

    init(count: Int, exponent: Double = 1.0, offset: Double = 2.7) {
        precondition(count > 0, "a Zipf sampler needs at least one rank")
        var sums = [Double]()
        sums.reserveCapacity(count)
        var total = 0.0
        for rank in 0..<count {
            total += 1 / pow(Double(rank) + offset, exponent)
            sums.append(total)
        }
        cumulative = sums.map { $0 / total }
    }

    /// The next rank, from `random`.
    func next(_ random: inout SplitMix64) -> Int {
        let target = Double(random.next() >> 11) / Double(1 << 53)
        // The first rank whose running sum passes the target.
        var low = 0
        var high = cumulative.count - 1
        while low < high {
            let middle = (low + high) / 2
            if cumulative[middle] > target { high = middle } else { low = middle + 1 }
        }
        return low
    }
}

extension SplitMix64 {
    /// A number in [0, 1).
    mutating func nextUnit() -> Double {
        Double(next() >> 11) / Double(1 << 53)
    }

    /// `true` with probability `chance` (0 to 1).
    mutating func happens(_ chance: Double) -> Bool {
        nextUnit() < chance
    }
}
