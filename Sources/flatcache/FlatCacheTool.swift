import ArgumentParser
import Foundation

/// `flatcache`: inspect, verify, repair, search, export and import a FlatCache folder.
@main
struct FlatCacheTool: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "flatcache",
        abstract: "Inspect, verify, repair, search, export and import a FlatCache cache folder.",
        discussion: """
            Works on caches of the built-in ChatMessage, ChatChannel and ChatUser records. \
            Human output by default, --json for scripts. Exit status: 0 all well, 1 something \
            is bad or failed, 2 wrong usage.
            """,
        version: "flatcache, unreleased (reads and writes cache format 1, with its records file)",
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
