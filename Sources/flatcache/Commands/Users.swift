import ArgumentParser
import FlatCache

struct Users: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the cached users, by user id.",
        discussion: "Reads only: a damaged file is reported on standard error (exit status 1) and left in place.")

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
