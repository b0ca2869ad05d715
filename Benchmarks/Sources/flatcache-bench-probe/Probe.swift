import BenchmarkKit
import Foundation
import MallocInterposerSwift

/// Runs one operation of one system on an existing cache folder and prints
/// `baseline=<bytes> peak=<bytes> mallocs=<count> mallocBytes=<bytes>`.
///
/// Usage: `flatcache-bench-probe load|resave <system> <folder> S|L`, or
/// `flatcache-bench-probe index FlatCache|SQLiteFTS5 <folder>` (``SearchProbe``).
/// Started by `flatcache-bench`, with `LD_PRELOAD` set to the interposer
/// library when it wants allocation counts.
@main
enum Probe {
    static func main() throws {
        let arguments = CommandLine.arguments.dropFirst()
        if arguments.first == "index" { return try SearchProbe.run(Array(arguments.dropFirst())) }
        guard arguments.count == 4, let kind = SystemKind(rawValue: arguments[arguments.startIndex + 1]) else {
            FileHandle.standardError.write(Data("usage: flatcache-bench-probe load|resave <system> <folder> S|L\n".utf8))
            exit(2)
        }
        let operation = arguments[arguments.startIndex]
        let folder = URL(fileURLWithPath: arguments[arguments.startIndex + 2])
        let name = arguments[arguments.startIndex + 3]
        let cache = try kind.open(in: folder, durable: false)

        // Build only what the operation needs before the baseline: the whole data to re-save, or just the URLs.
        let data = operation == "resave" ? Workload.named(name) : nil
        let urls = data?.channelURLs ?? Workload.named(name, urlsOnly: true).channelURLs
        ProcessMemory.resetPeak()
        let baseline = ProcessMemory.resident ?? 0
        MallocInterposerSwift.initialize()
        MallocInterposerSwift.hook()
        if let data {
            try cache.saveEverything(data)
        } else {
            _ = try cache.loadEveryChannel(urls)
        }
        MallocInterposerSwift.unhook()
        let statistics = MallocInterposerSwift.getStatistics()
        let peak = ProcessMemory.peakResident ?? 0
        let preloaded = ProcessInfo.processInfo.environment["LD_PRELOAD"]?.contains("MallocInterposer") == true
        print("baseline=\(baseline) peak=\(peak) mallocs=\(preloaded ? statistics.mallocCount : -1) "
            + "mallocBytes=\(preloaded ? statistics.mallocBytesCount : -1)")
    }
}
