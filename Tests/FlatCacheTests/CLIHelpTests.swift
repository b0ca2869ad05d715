import Foundation
import Testing

/// Help is the tools' manual: `flatcache help <command>` and `flatcache <command> --help` (and the
/// same of `flatcache-matrix`) say everything about a command, and the man page is made from it.
///
/// The commands and their arguments come from each tool's own configuration, as its
/// `--experimental-dump-help` prints it (the JSON `Scripts/generate-manual` makes the man page
/// from), so a command or an option added later is checked too, and one added without help fails.
@Suite struct CLIHelpTests {
    let folder: TemporaryFolder

    init() throws {
        folder = try TemporaryFolder()
    }

    /// The subcommands each tool must have, in order: the configuration's list is checked against it.
    static let tools: [(program: String, subcommands: [String])] = [
        ("flatcache", ["info", "verify", "channels", "messages", "search", "users", "outbox", "export", "import"]),
        ("flatcache-matrix", ["sync", "rooms", "messages", "search", "send"]),
    ]

    @Test(arguments: tools.map(\.program))
    func everySubcommandHasHelpThatSaysItAll(_ program: String) throws {
        // Given the tool's own description of its commands
        let root = try dump(program)
        let commands = (root.subcommands ?? []).filter { $0.commandName != "help" }
        let expected = try #require(Self.tools.first { $0.program == program }).subcommands
        #expect(commands.map(\.commandName) == expected)
        let overview = try run(program, ["--help"])
        #expect(overview.status == 0)
        #expect(Self.manPageProblems(in: root).isEmpty, "\(Self.manPageProblems(in: root))")

        for command in commands {
            // Then each has an abstract, a discussion, and help on every argument
            let abstract = try #require(command.abstract, "\(program) \(command.commandName) has no abstract")
            let discussion = try #require(command.discussion, "\(program) \(command.commandName) has no discussion")
            #expect(!abstract.isEmpty && !discussion.isEmpty)
            if program == "flatcache" {
                #expect(discussion.contains("Exit status"), "\(command.commandName)'s help does not give its exit status")
                #expect(discussion.contains("Examples:\n") && discussion.contains("\n  flatcache \(command.commandName) "),
                        "\(command.commandName)'s help has no example of itself")
            }
            for argument in command.arguments ?? [] where argument.shouldDisplay {
                #expect(!(argument.abstract ?? "").isEmpty, "\(program) \(command.commandName) \(argument.label) has no help")
            }
            #expect(Self.manPageProblems(in: command).isEmpty, "\(Self.manPageProblems(in: command))")
            #expect(Self.words(overview.stdout).contains(Self.words("\(command.commandName) \(abstract)")))

            // When its help is asked for both ways
            let help = try run(program, ["help", command.commandName])
            let dashHelp = try run(program, [command.commandName, "--help"])

            // Then both exit 0 and print the same: the abstract, the discussion and every argument with its help
            #expect(help.status == 0, "\(program) help \(command.commandName): \(help.stderr)")
            #expect(dashHelp.status == 0, "\(program) \(command.commandName) --help: \(dashHelp.stderr)")
            #expect(help.stdout == dashHelp.stdout)
            let printed = Self.words(help.stdout)
            #expect(printed.contains(Self.words(abstract)), "\(program) help \(command.commandName) lacks its abstract")
            #expect(printed.contains(Self.words(discussion)), "\(program) help \(command.commandName) lacks its discussion")
            for line in Self.helpLines(of: command) {
                #expect(printed.contains(line), "\(program) help \(command.commandName) lacks '\(line)'")
            }
        }
    }

    /// Each shown argument as help prints it: its name and value, then its help (in words). A flag
    /// with an inversion is two arguments with one help, printed as one: `--prefetch/--no-prefetch`.
    static func helpLines(of command: Command) -> [String] {
        var lines = [String]()
        var arguments = (command.arguments ?? []).filter(\.shouldDisplay)[...]
        while let argument = arguments.popFirst() {
            var label = argument.label
            if argument.kind == "flag", let inverse = arguments.first, inverse.kind == "flag",
               inverse.abstract == argument.abstract, inverse.label == argument.label.replacingOccurrences(of: "--", with: "--no-") {
                label += "/" + inverse.label
                arguments.removeFirst()
            }
            lines.append(words("\(label) \(argument.valueLabel) \(argument.abstract ?? "")"))
        }
        return lines
    }

    /// What would break the man page: the generator drops every character that is not ASCII, and
    /// reads a line that starts with "." or "'" as a roff request (it escapes only the text's first).
    static func manPageProblems(in command: Command) -> [String] {
        let texts = [command.abstract, command.discussion].compactMap { $0 } + (command.arguments ?? []).compactMap(\.abstract)
        return texts.flatMap { text in
            text.split(separator: "\n").enumerated().compactMap { index, line in
                if !line.unicodeScalars.allSatisfy(\.isASCII) { return "not ASCII: \(line)" }
                if index > 0 && (line.first == "." || line.first == "'") { return "a roff request: \(line)" }
                return nil
            }
        }
    }

    /// Text with every run of white space as one space: help wraps lines to the terminal's width.
    static func words(_ text: String) -> String {
        text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    func run(_ program: String, _ arguments: [String]) throws -> ToolRun {
        try ToolRun(arguments, of: program, in: folder.url, timeLimit: .seconds(60))
    }

    /// The tool's commands as its configuration describes them.
    func dump(_ program: String) throws -> Command {
        let run = try run(program, ["--experimental-dump-help"])
        #expect(run.status == 0)
        return try JSONDecoder().decode(ToolInfo.self, from: Data(run.stdout.utf8)).command
    }

    /// The parts of ArgumentParser's `--experimental-dump-help` JSON (serialization version 0) the test reads.
    struct ToolInfo: Decodable {
        var serializationVersion: Int
        var command: Command
    }

    struct Command: Decodable {
        var commandName: String
        var abstract: String?
        var discussion: String?
        var arguments: [Argument]?
        var subcommands: [Command]?
    }

    struct Argument: Decodable {
        struct Name: Decodable {
            var kind: String
            var name: String
        }

        var kind: String
        var names: [Name]?
        var preferredName: Name?
        var valueName: String?
        var abstract: String?
        var shouldDisplay: Bool

        /// How help names it: `--limit`, `-h, --help`, or `<directory>` for a positional argument.
        var label: String {
            guard kind != "positional" else { return "<\(valueName ?? "")>" }
            return (names ?? []).map { ($0.kind == "long" ? "--" : "-") + $0.name }.joined(separator: ", ")
        }

        /// The value an option takes, as help shows it after its name (`<path>`); empty for a flag.
        var valueLabel: String {
            kind == "option" ? "<\(valueName ?? "")>" : ""
        }
    }
}
