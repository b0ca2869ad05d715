import BenchmarkKit
import Foundation
import MallocInterposerSwift

/// The search index built from scratch on an existing store, in a fresh
/// process: prints `baseline=<bytes> peak=<bytes> mallocs=<count>
/// mallocBytes=<bytes> messages=<count>` as ``Probe`` does.
enum SearchProbe {
    /// `arguments`: the system's slug (`FlatCache` or `SQLiteFTS5`) and the folder its store is in.
    static func run(_ arguments: [String]) throws {
        guard arguments.count == 2, let kind = SearchSystemKind(slug: arguments[0]) else {
            FileHandle.standardError.write(Data("usage: flatcache-bench-probe index FlatCache|SQLiteFTS5 <folder>\n".utf8))
            exit(2)
        }
        let system = try kind.open(in: URL(fileURLWithPath: arguments[1]))
        // The store as it was saved, with no index, outside the measurement.
        try system.dropIndex()
        ProcessMemory.resetPeak()
        let baseline = ProcessMemory.resident ?? 0
        MallocInterposerSwift.initialize()
        MallocInterposerSwift.hook()
        try system.indexFromScratch()
        MallocInterposerSwift.unhook()
        let statistics = MallocInterposerSwift.getStatistics()
        let peak = ProcessMemory.peakResident ?? 0
        let count = try system.indexedMessageCount()
        try system.close()
        let preloaded = ProcessInfo.processInfo.environment["LD_PRELOAD"]?.contains("MallocInterposer") == true
        print("baseline=\(baseline) peak=\(peak) mallocs=\(preloaded ? statistics.mallocCount : -1) "
            + "mallocBytes=\(preloaded ? statistics.mallocBytesCount : -1) messages=\(count)")
    }
}
