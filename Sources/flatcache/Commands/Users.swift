import ArgumentParser
import FlatCache

struct Users: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List the cached users, by user id.")

    @OptionGroup var options: CacheOptions

    func run() throws {
        let users = try options.openExisting().users.load()
        if options.json { return try Output.json(users) }
        Output.table([["ID", "NICKNAME", "PROFILE"]] + users.map { [$0.userID, $0.nickname, $0.profileURL] })
    }
}
