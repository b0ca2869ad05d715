import Foundation
import Testing

/// Compares a folder with a checked-in golden folder, byte for byte.
///
/// Goldens live in `Tests/FlatCacheTests/Golden/<name>`. Set
/// `FLATCACHE_RECORD_GOLDENS=1` to re-record them on purpose: recording
/// replaces the golden and fails the test, so it can never pass silently.
/// A missing golden fails too.
enum GoldenFolder {
    static let recordVariable = "FLATCACHE_RECORD_GOLDENS"

    /// The golden folder called `name`.
    static func url(_ name: String) -> URL {
        root.appendingPathComponent(name)
    }

    /// `Tests/FlatCacheTests/Golden`, found from this file's own path (`Support/` is beside it).
    private static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Golden")

    /// Records an issue for every difference between `actual` and the golden called `name`.
    static func assertMatches(
        _ actual: URL, golden name: String, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let golden = url(name)
        if ProcessInfo.processInfo.environment[recordVariable] == "1" {
            try? FileManager.default.removeItem(at: golden)
            try FileManager.default.createDirectory(
                at: golden.deletingLastPathComponent(), withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: actual, to: golden)
            Issue.record("Recorded golden '\(name)'. Unset \(recordVariable) and run again.", sourceLocation: sourceLocation)
            return
        }
        guard FileManager.default.fileExists(atPath: golden.path) else {
            Issue.record(
                "Golden '\(name)' is missing at \(golden.path). Run with \(recordVariable)=1 to record it.",
                sourceLocation: sourceLocation)
            return
        }
        for difference in try differences(between: actual, and: golden) {
            Issue.record("Golden '\(name)': \(difference)", sourceLocation: sourceLocation)
        }
    }

    /// Every way the two folders differ: files only on one side, and the first
    /// differing line of each file whose bytes differ. Hidden files count.
    static func differences(between actual: URL, and golden: URL) throws -> [String] {
        let actualFiles = try files(in: actual)
        let goldenFiles = try files(in: golden)
        var found = [String]()
        for path in actualFiles.subtracting(goldenFiles).sorted() { found.append("unexpected file \(path)") }
        for path in goldenFiles.subtracting(actualFiles).sorted() { found.append("missing file \(path)") }
        for path in actualFiles.intersection(goldenFiles).sorted() {
            let got = try Data(contentsOf: actual.appendingPathComponent(path))
            let want = try Data(contentsOf: golden.appendingPathComponent(path))
            if got != want { found.append("\(path) differs: \(firstDifference(got, want))") }
        }
        return found
    }

    /// The relative paths of all regular files below `root`.
    static func files(in root: URL) throws -> Set<String> {
        var paths = Set<String>()
        guard let walker = FileManager.default.enumerator(atPath: root.path) else { return paths }
        while let path = walker.nextObject() as? String {
            var isDirectory: ObjCBool = false
            let exists = FileManager.default.fileExists(
                atPath: root.appendingPathComponent(path).path, isDirectory: &isDirectory)
            if exists && !isDirectory.boolValue { paths.insert(path) }
        }
        return paths
    }

    private static func firstDifference(_ got: Data, _ want: Data) -> String {
        let gotLines = String(decoding: got, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        let wantLines = String(decoding: want, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        for (index, (g, w)) in zip(gotLines, wantLines).enumerated() where g != w {
            return "line \(index + 1)\n  - golden: \(w.prefix(120))\n  + actual: \(g.prefix(120))"
        }
        return "\(got.count) bytes, golden has \(want.count)"
    }
}
