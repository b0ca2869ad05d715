import FlatCache
import Foundation
import Testing

/// `flatcache verify` and the tool's output beyond the golden runs of
/// `CLITests`: exits after a repair, unfinished appends, the progress line
/// on a terminal, table columns with wide characters, a missing folder.
extension CLITests {
    @Test func verifyRepairExitsZeroWhenNothingBadIsLeftAndSaysWhatMoved() throws {
        try damageOneMessageFile()
        let repair = try flatcache(["verify", "cache", "--repair"])
        #expect(repair.status == 0, "\(repair.stdout)\(repair.stderr)")
        #expect(repair.stdout.contains("; moved to quarantine/"))
        #expect(repair.stdout.hasSuffix("8 files checked, 1 bad, 1 moved into quarantine/\n"))
        let json = try flatcache(["verify", "cache", "--json"])
        #expect(json.status == 0 && json.stdout.contains("\"badFilesLeft\" : 0"))
    }

    @Test func verifyNotesAnUnfinishedAppendAndRepairCutsItOff() throws {
        let messages = folder.appending("cache/messages")
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: messages.path).sorted().first { $0.hasSuffix(".lines") })
        let file = messages.appendingPathComponent(name)
        let whole = try Data(contentsOf: file)
        try (whole + Data("QUJD\nQU".utf8)).write(to: file)  // 7 bytes past what the sidecar names
        try expectGolden("verify-unfinished-append", ["verify", "cache"])
        try expectGolden("verify-unfinished-append-json", ["verify", "cache", "--json"])
        #expect(try Data(contentsOf: file).count == whole.count + 7)
        try expectGolden("verify-repair-unfinished-append", ["verify", "cache", "--repair"])
        #expect(try Data(contentsOf: file) == whole)
        try expectGolden("verify", ["verify", "cache"])
    }

    /// On a terminal (a pseudo-terminal from `script`), the progress line
    /// counts the files that exist and ends its own line before the summary.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script")))
    func verifyProgressOnATerminalCountsTheFilesThereAndEnds() throws {
        try FileManager.default.removeItem(at: folder.appending("cache/users.lines"))
        try FileManager.default.removeItem(at: folder.appending("cache/users.lines.sha256"))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qec", "'\(Executables.url("flatcache").path)' verify cache", "/dev/null"]
        process.currentDirectoryURL = folder.url
        let out = Pipe()
        process.standardOutput = out
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(output)")
        // channels.lines, 5 message files and records: 7 files, counted 1/7 up to 7/7.
        #expect(output.contains("\rverified 1/7"))
        #expect(output.contains("\rverified 7/7\r\n7 files checked, 0 bad\r\n"), "\(output.debugDescription)")
        #expect(!output.contains("/8"))
    }

    @Test func tableColumnsLineUpByDisplayWidthWithCJKAndEmoji() throws {
        for (command, column) in [("users", "https://"), ("channels", "2025-")] {
            let run = try flatcache([command, "cache"])
            let rows = run.stdout.split(separator: "\n").dropFirst()
            let starts = Set(rows.compactMap { row in row.range(of: column).map { Self.columns(row[..<$0.lowerBound]) } })
            #expect(starts.count == 1, "\(command): \(run.stdout)")
            // Wide names are there, so the check means something.
            #expect(rows.contains { Self.columns($0) > $0.count })
        }
    }

    /// Terminal columns, simply: CJK and emoji clusters take two.
    static func columns(_ text: Substring) -> Int {
        text.reduce(0) { width, character in
            let wide = character.unicodeScalars.contains {
                $0.properties.isEmojiPresentation || (0x3000...0x9FFF).contains($0.value) || $0.value == 0xFE0F
            }
            return width + (wide ? 2 : 1)
        }
    }

    @Test func verifyHelpSaysWhatItChecksPrintsAndExitsWith() throws {
        try expectGolden("help-verify", ["verify", "--help"])
    }

    @Test func infoOnAMissingFolderSaysItDoesNotExist() throws {
        try expectGolden("info-missing-folder", ["info", "nowhere"])
        try Data().write(to: folder.appending("a-file"))
        try expectGolden("info-on-a-file", ["info", "a-file"])
    }
}
