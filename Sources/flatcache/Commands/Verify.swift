import ArgumentParser
import FlatCache
import Foundation

struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check every data file against its sidecar and decode every record.",
        discussion: "Exit status 0 when every file is valid, 1 when one is not. With --repair, bad files are moved into the cache's quarantine folder, as the library does when it loads one.")

    @OptionGroup var options: CacheOptions

    @Flag(help: "Move bad files aside (into quarantine/), and say where.")
    var repair = false

    struct Report: Codable {
        var filesChecked: Int
        var badFiles: [VerifiedFile]
    }

    func run() throws {
        let cache = try options.openExisting()
        let files = try cache.verify(repair: repair) { Output.progress("verified", $0, $1) }
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
