import ArgumentParser
import FlatCache
import Foundation

struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check every file of the cache format: data files against their sidecars, every record decoded.",
        discussion: HelpText.paragraphs(
            """
            Checks every file the format defines (docs/format.md): channels.lines, users.lines and \
            every messages/<key>.lines against their sidecars, every record decoded; the \
            continuity files (channels.continuity, messages/<key>.continuity); outbox.lines (every \
            line an outbox record, its messages decoded); usage.lines; and the records and \
            preloaded files. Prints one line per bad file ("<path>: <problem>"), then "N files \
            checked, M bad". Without --repair it reads only and changes nothing.
            """,
            """
            With --repair, each bad file is moved into the cache's quarantine/ folder, as the \
            library does when it loads one: its line ends with "; moved to quarantine/<incident>", \
            and the summary adds ", K moved into quarantine/". A bad records file is never moved.
            """,
            """
            An append that a crash left unfinished (bytes after the last line the sidecar names, \
            which reads ignore) is not damage: it gets the note "<path>: N bytes of an unfinished \
            append after its records (ignored; --repair cuts them off)", and --repair cuts the \
            bytes off ("<path>: cut off N bytes of an unfinished append").
            """,
            """
            --json prints one object: filesChecked, badFiles (each with movedTo when it was moved), \
            badFilesLeft, unfinishedAppends (each with unfinishedAppendBytes), recordsDecoded and \
            keyID (for an encrypted folder). On a terminal, standard error shows "verified \
            N/TOTAL" as it goes, TOTAL being the files that exist, and ends that line before the \
            summary.
            """,
            """
            An encrypted folder is checked in full with --key-file (every line opened and \
            decoded). Without it, every file is checked against its sidecar and its Base64 only \
            (what `sha256sum -c` checks), and a line before the summary says so: "encrypted with \
            key <key id>: sidecars checked, no record opened (--key-file opens them)"; --repair \
            needs the key. A folder written with other record types is checked the same way, \
            without decoding its records, and cannot be repaired here.
            """,
            """
            Exit status: 0 when no bad file is left (none was found, or --repair moved each one \
            aside; unfinished appends do not count); 1 when one is, or on an error (one "Error: \
            ..." line on standard error, such as "Error: <folder> does not exist."); 2 wrong usage.
            """,
            HelpText.examples(
                "flatcache verify ~/.cache/flatcache-demo",
                "flatcache verify ~/.cache/flatcache-demo --repair",
                "flatcache verify Chat.cache --json",
                "flatcache verify Chat.cache --key-file chat.key")))

    @OptionGroup var options: CacheOptions

    @Flag(help: "Move bad files aside (into quarantine/), say where, and cut off unfinished appends.")
    var repair = false

    struct Report: Codable {
        var filesChecked: Int
        /// Bad files, each with `movedTo` when --repair moved it aside.
        var badFiles: [VerifiedFile]
        /// How many bad files are left in place: the exit status is 1 when there is one.
        var badFilesLeft: Int
        /// Valid files with bytes of an unfinished append after their records.
        var unfinishedAppends: [VerifiedFile]
        /// Whether every record was opened and decoded; `false` when only sidecars and Base64 were
        /// checked (an encrypted folder without --key-file, or a folder of other record types).
        var recordsDecoded: Bool
        /// The id of the key that seals the folder's lines; left out for a plain folder.
        var keyID: String?
    }

    func run() throws {
        let files: [VerifiedFile]
        var decoded = true
        // The key id of an encrypted folder checked without its key.
        var unopenedKeyID: String?
        do {
            files = try options.open(readOnly: !repair).blocking.verify(repair: repair) { Output.progress("verified", $0, $1) }
        } catch FlatCacheError.recordTypeMismatch where !repair {
            files = try CacheFolderSummary.verify(directory: options.url) { Output.progress("verified", $0, $1) }
            decoded = false
        } catch FlatCacheError.encryptionKeyRequired(_, let keyID) where !repair {
            files = try CacheFolderSummary.verify(directory: options.url) { Output.progress("verified", $0, $1) }
            (decoded, unopenedKeyID) = (false, keyID)
        }
        let keyID = try CacheFolderSummary.keyID(directory: options.url)
        let bad = files.filter { !$0.isValid }
        let left = bad.filter { $0.movedTo == nil }
        let unfinished = files.filter { $0.unfinishedAppendBytes != nil }
        if options.json {
            try Output.json(Report(
                filesChecked: files.count, badFiles: bad, badFilesLeft: left.count, unfinishedAppends: unfinished,
                recordsDecoded: decoded, keyID: keyID))
        } else {
            for file in bad {
                print("\(file.path): \(file.problem ?? "bad")" + (file.movedTo.map { "; moved to \($0)" } ?? ""))
            }
            for file in unfinished {
                let bytes = file.unfinishedAppendBytes ?? 0
                print(repair
                    ? "\(file.path): cut off \(bytes) bytes of an unfinished append"
                    : "\(file.path): \(bytes) bytes of an unfinished append after its records (ignored; --repair cuts them off)")
            }
            if let keyID = unopenedKeyID {
                print("encrypted with key \(keyID): sidecars checked, no record opened (--key-file opens them)")
            }
            let moved = bad.count - left.count
            print("\(files.count) files checked, \(bad.count) bad" + (moved > 0 ? ", \(moved) moved into quarantine/" : ""))
        }
        if !left.isEmpty { throw ExitCode(1) }
    }
}
