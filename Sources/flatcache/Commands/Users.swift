import ArgumentParser
import FlatCache

struct Users: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the cached users, by user id.",
        discussion: HelpText.paragraphs(
            """
            Prints one row per user: user id, nickname and profile URL. --json prints the users as \
            an array of objects.
            """,
            HelpText.otherRecordTypes,
            HelpText.keyRequired,
            HelpText.readsOnly,
            HelpText.readExitStatus,
            HelpText.examples(
                "flatcache users ~/.cache/flatcache-demo",
                "flatcache users ~/.cache/flatcache-demo --json")))

    @OptionGroup var options: CacheOptions

    func run() throws {
        try options.read({ cache in
            let users = try cache.users.blocking.load()
            if options.json { return try Output.json(users) }
            Output.table([["ID", "NICKNAME", "PROFILE"]] + users.map { [$0.userID, $0.nickname, $0.profileURL] })
        }, otherTypes: { summary in
            try Output.opaque(summary.files.filter { $0.role == .users }, of: summary, json: options.json)
        })
    }
}
