import ArgumentParser
import Foundation

/// `flatcache`: inspect, verify, repair, search, export and import a FlatCache folder.
@main
struct FlatCacheTool: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "flatcache",
        abstract: "Inspect, verify, repair, search, export and import a FlatCache cache folder.",
        discussion: HelpText.paragraphs(
            """
            Cache folders have hashed file names: flatcache reads them for you, so you can debug a \
            cache pulled off a device, check one in CI, or build a preloaded cache to ship inside an \
            app bundle. It works on caches of the built-in ChatMessage, ChatChannel and ChatUser \
            records. Human output by default; every command but export takes --json for scripts. \
            Tables pad their columns by display width: CJK characters and emoji take two columns.
            """,
            """
            Only `verify --repair` and `import` ever change a folder. The read commands (info, \
            verify, channels, messages, search, users, outbox, export) open it read-only, so they \
            work on a cache they may only read (in an app bundle, on a read-only mount, owned by \
            another user) and leave it byte for byte as it was. Each damaged file they meet is left \
            in place, makes the exit status 1, and is named: on standard error ("Damaged: \
            messages/<key>.lines: ..."), or, by verify, in its report on standard output.
            """,
            """
            Every command takes --key-file for an encrypted folder (the key as 32 raw bytes or 64 \
            hex digits). Without it, info and verify still work (line counts, and every sidecar \
            checked, with the key id shown); the others stop with an error naming the key id. A \
            folder written with other record types (an app's own ChatCache<SDKMessage, ...>) cannot \
            be decoded: info, channels, messages, users and outbox show its record types, record \
            counts, bytes and when each file was last saved; verify checks sidecars and Base64; \
            search and export refuse it.
            """,
            """
            Exit status: 0 all well; 1 something is bad or failed (a damaged file, or an error: one \
            "Error: ..." line on standard error, such as "Error: <folder> does not exist." or \
            "Error: <file> is not a folder."); 2 wrong usage (the error, then the usage lines).
            """,
            HelpText.examples(
                "flatcache info ~/.cache/flatcache-demo",
                "flatcache verify ~/.cache/flatcache-demo --repair",
                "flatcache search ~/.cache/flatcache-demo \"trail\"",
                "flatcache export ~/.cache/flatcache-demo > cache.jsonl",
                "flatcache import Preloaded.cache --file cache.jsonl",
                "flatcache info Chat.cache --key-file chat.key"),
            """
            For everything about one command (what it prints, its options, exit status and \
            examples): flatcache help <command>, or flatcache <command> --help. The same text is \
            the man page flatcache(1), which Scripts/generate-manual makes; docs/cli.md has it \
            too, with more examples.
            """),
        version: "flatcache, unreleased (reads cache formats 1 and 2 and writes format 2, with its records file)",
        subcommands: [
            Info.self, Verify.self, Channels.self, Messages.self, Search.self, Users.self, OutboxList.self, Export.self,
            Import.self,
        ])

    /// Runs the command line, with exit status 2 (not ArgumentParser's 64) for wrong usage.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            if exitCode(for: error) == .validationFailure {
                FileHandle.standardError.write(Data((fullMessage(for: error) + "\n").utf8))
                Foundation.exit(2)
            }
            exit(withError: KeyFileOption.explained(error))
        }
    }
}
