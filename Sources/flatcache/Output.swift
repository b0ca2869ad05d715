import FlatCache
import Foundation
import Logging

/// Printing for people and for scripts, in one place.
enum Output {
    /// JSON with sorted keys, one object or array per run.
    static func json<T: Encodable>(_ value: T) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes, .prettyPrinted]
        print(String(decoding: try encoder.encode(value), as: UTF8.self))
    }

    /// Rows as columns padded to their widest cell by display width (see
    /// ``DisplayWidth``: CJK and emoji take two columns), two spaces apart.
    static func table(_ rows: [[String]]) {
        guard let columns = rows.map(\.count).max() else { return }
        let widths = (0..<columns).map { column in
            rows.map { column < $0.count ? DisplayWidth.of($0[column]) : 0 }.max() ?? 0
        }
        for row in rows {
            // Pad, never cut: a cell is printed whole.
            let cells = row.enumerated().map { index, cell in
                index == row.count - 1
                    ? cell : cell + String(repeating: " ", count: max(0, widths[index] - DisplayWidth.of(cell)))
            }
            print(cells.joined(separator: "  "))
        }
    }

    /// "2025-11-23 13:33:29 UTC" for milliseconds since 1970.
    static func time(_ milliseconds: Int64) -> String {
        formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000)) + " UTC"
    }

    private static let formatter: DateFormatter = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return formatter
    }()

    /// A progress line on standard error, only when it is a terminal: "verb done/total",
    /// rewritten in place; the call with `done == total` ends the line.
    static func progress(_ verb: String, _ done: Int, _ total: Int) {
        guard isatty(STDERR_FILENO) == 1 else { return }
        let end = done >= total ? "\n" : ""
        FileHandle.standardError.write(Data("\r\(verb) \(done)/\(total)\(end)".utf8))
    }

    /// One line on standard error.
    static func error(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    /// The data files of a folder written with other record types, which the
    /// tool cannot decode: path, records (lines), bytes and when each was last
    /// saved, with a note on standard error saying why nothing more is shown.
    static func opaque(_ files: [CacheFolderSummary.File], of summary: CacheFolderSummary, json: Bool) throws {
        error("This folder holds \(summary.recordTypes.map { "\($0)" } ?? "unknown record types"); flatcache decodes only the built-in ones, so it shows records, bytes and times.")
        if json { return try Output.json(files) }
        table([["FILE", "RECORDS", "BYTES", "LAST SAVED"]] + files.map {
            [$0.path, $0.problem == nil ? "\($0.records)" : "damaged", "\($0.bytes)", time($0.modifiedAt)]
        })
    }

    /// The tool reports bad files itself; the library's warnings would say it twice.
    static let quietLogger = Logger(label: "flatcache") { _ in SwiftLogNoOpLogHandler() }
}
