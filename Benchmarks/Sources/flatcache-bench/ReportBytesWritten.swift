import BenchmarkKit
import Foundation

extension Report {
    /// The bytes each write operation handed to the file system, per round, for FlatCache and SQLite
    /// (its database, WAL and journal alike): `/proc/self/io`'s `wchar` around each timed call.
    func bytesWrittenTable(_ result: WorkloadResult) -> [String] {
        let name = result.workload.name
        var out = ["\n### \(name): bytes written per write operation (reported, no target)\n"]
        let rows = Operation.allCases.filter(\.writes).flatMap { operation in
            [false, true].compactMap { durable in
                result.timings[.init(operation: operation, durable: durable)].map { (operation, durable, $0) }
            }
        }
        guard rows.contains(where: { $0.2[.flatCache]?.medianBytesWritten != nil }) else {
            out.append("Not measured on this system: the count comes from Linux's `/proc/self/io`.")
            return out
        }
        out.append("Bytes passed to `write(2)` and its kin during each timed call (`wchar` of `/proc/self/io`, "
            + "every file of the store: FlatCache's data files and sidecars, SQLite's database, WAL and journal), "
            + "median of the rounds.\n")
        out.append("| operation | durability | FlatCache | SQLite (GRDB) | FlatCache / SQLite |")
        out.append("|---|---|---|---|---|")
        for (operation, durable, row) in rows {
            guard let mine = row[.flatCache]?.medianBytesWritten, let theirs = row[.sqlite]?.medianBytesWritten else { continue }
            let ratio = theirs > 0 ? String(format: "%.2fx", Double(mine) / Double(theirs)) : "–"
            out.append("| \(operation.rawValue) | \(durable ? "on" : "off") | \(Self.mebibytes(mine)) | \(Self.mebibytes(theirs)) | \(ratio) |")
        }
        return out
    }

    static func mebibytes(_ bytes: Int) -> String { String(format: "%.2f MiB", Double(bytes) / 1_048_576) }
}
