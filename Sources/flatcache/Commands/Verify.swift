import ArgumentParser
import FlatCache
import Foundation

struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check every data file against its sidecar and decode every record.",
        discussion: "Exit status 0 when every file is valid, 1 when one is not. Without --repair it reads only and changes nothing. With --repair, bad files are moved into the cache's quarantine folder, as the library does when it loads one. A folder written with other record types is checked without decoding its records (sidecars and Base64), and cannot be repaired here.")

    @OptionGroup var options: CacheOptions

    @Flag(help: "Move bad files aside (into quarantine/), and say where.")
    var repair = false

    struct Report: Codable {
        var filesChecked: Int
        var badFiles: [VerifiedFile]
    }

    func run() throws {
        let files: [VerifiedFile]
        do {
            files = try options.open(readOnly: !repair).verify(repair: repair) { Output.progress("verified", $0, $1) }
        } catch FlatCacheError.recordTypeMismatch where !repair {
            files = try CacheFolderSummary.read(directory: options.url).files.map {
                VerifiedFile(path: $0.path, records: $0.records, problem: $0.problem, movedTo: nil)
            }
        }
        let bad = files.filter { !$0.isValid }
        if options.json {
            try Output.json(Report(filesChecked: files.count, badFiles: bad))
        } else {
            for file in bad {
                print("\(file.path): \(file.problem ?? "bad")" + (file.movedTo.map { "; moved to \($0)" } ?? ""))
            }
            print("\(files.count) files checked, \(bad.count) bad" + (repair && !bad.isEmpty ? ", moved aside" : ""))
        }
        if !bad.isEmpty { throw ExitCode(1) }
    }
}
