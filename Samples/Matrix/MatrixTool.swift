import ArgumentParser
import FlatCache
import FlatCacheMatrix
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `flatcache-matrix`: keeps a Matrix account's rooms cached in a folder and
/// shows them from the cache, offline.
@main
struct MatrixTool: AsyncParsableCommand {
    /// The subcommands.
    static let configuration = CommandConfiguration(
        commandName: "flatcache-matrix",
        abstract: "Keep a Matrix account's rooms in a FlatCache folder, and show them offline.",
        discussion: """
            'sync' logs in, caches the joined rooms, each room's newest messages (and what was \
            missed since the last sync) and their senders' profiles; with --follow it then keeps \
            the cache up to date with live events until interrupted. 'send' queues a message in \
            the folder's outbox and sends it if the server answers; offline it stays queued, and \
            the next 'sync' sends it. 'rooms', 'messages' and 'search' read the folder only: they \
            work with the server down. The 'flatcache' tool reads the same folder too ('flatcache info', \
            'flatcache verify').
            """,
        subcommands: [SyncCommand.self, RoomsCommand.self, MessagesCommand.self, SearchCommand.self, SendCommand.self])
}

/// The cache folder every subcommand takes.
struct FolderOption: ParsableArguments {
    @Option(name: .long, help: "The cache folder (created by 'sync').")
    var directory: String

    var url: URL { URL(fileURLWithPath: directory) }

    /// The cache, read-only: for the offline commands, which must find a folder 'sync' made.
    func openForReading() throws -> MatrixCache {
        guard FileManager.default.fileExists(atPath: url.appendingPathComponent("format").path) else {
            throw ToolError("\(directory) is not a FlatCache folder yet: run 'flatcache-matrix sync' first.")
        }
        return try MatrixCache(directory: url, configuration: Configuration(maxMessagesPerChannel: .max, readOnly: true))
    }
}

/// The homeserver and the credentials of the online subcommands.
struct LoginOptions: ParsableArguments {
    @Option(name: .long, help: "The homeserver's URL, such as http://127.0.0.1:8008.")
    var homeserver: String

    @Option(name: .long, help: "The user to log in as: a localpart (mina) or a user id (@mina:example.org).")
    var user: String?

    @Option(name: .long, help: "The password (or set FLATCACHE_MATRIX_PASSWORD).")
    var password: String?

    @Option(name: .long, help: "An access token instead of a user and password (or set FLATCACHE_MATRIX_TOKEN).")
    var accessToken: String?

    /// The user id given as `--user @name:server`; `nil` for a localpart or a token.
    var userID: String? { user.flatMap { $0.hasPrefix("@") && $0.contains(":") ? $0 : nil } }

    private var environment: [String: String] { ProcessInfo.processInfo.environment }
    private var givenPassword: String? { password ?? environment["FLATCACHE_MATRIX_PASSWORD"] }
    private var givenToken: String? { accessToken ?? environment["FLATCACHE_MATRIX_TOKEN"] }

    func validate() throws {
        guard let url = URL(string: homeserver), url.host != nil, ["http", "https"].contains(url.scheme ?? "") else {
            throw ValidationError("--homeserver must be an http:// or https:// URL, not '\(homeserver)'.")
        }
        guard (user != nil && givenPassword != nil) || givenToken != nil else {
            throw ValidationError("give --user and --password, or --access-token.")
        }
    }

    /// At most two connections to the homeserver: the one live `/sync` long poll, and one that every
    /// other request takes in turn (a server or a proxy allows few per client).
    static var connections: URLSessionConfiguration {
        let configuration = MatrixClient.defaultConfiguration
        configuration.httpMaximumConnectionsPerHost = 2
        return configuration
    }

    /// Logs in with the password, or checks the access token.
    func account() async throws -> MatrixAccount {
        let server = URL(string: homeserver)!  // checked by validate()
        let account: MatrixAccount
        if let user, let password = givenPassword {
            account = try await MatrixAccount.login(
                homeserver: server, user: user, password: password, deviceName: "flatcache-matrix",
                configuration: Self.connections)
        } else {
            account = try await MatrixAccount.resume(
                homeserver: server, accessToken: givenToken ?? "", configuration: Self.connections)
        }
        print("logged in as \(account.userID) on \(server.absoluteString)")
        return account
    }
}

/// How dates are shown: local time, to the minute.
enum Format {
    static func time(_ milliseconds: Int64) -> String {
        let date = Date(timeIntervalSince1970: Double(milliseconds) / 1_000)
        return date.formatted(.iso8601.year().month().day().dateSeparator(.dash).time(includingFractionalSeconds: false)
            .timeSeparator(.colon).dateTimeSeparator(.space))
    }

    /// A line for an outbox entry: queued time, sender, text, and its state.
    static func line(_ entry: OutboxEntry<MatrixMessage>, names: [String: String]) -> String {
        let sender = entry.message.sender.isEmpty ? "you" : names[entry.message.sender] ?? entry.message.sender
        let state = switch entry.state {
        case .pending: "queued"
        case .sending: "sending"
        case .failed(let reason, _): "failed: \(reason)"
        case .sent(let id): "sent \(id)"
        }
        return "\(time(entry.queuedAt))  \(sender): \(entry.message.body)  (\(state))"
    }

    /// A line for a message: time, sender, text.
    static func line(_ message: MatrixMessage, names: [String: String]) -> String {
        let sender = names[message.sender] ?? message.sender
        let edited = message.isEdited ? " (edited)" : ""
        return "\(time(message.createdAt))  \(sender): \(message.body)\(edited)"
    }
}

/// A failure to report as `Error: …` with exit status 1, without the usage
/// lines ArgumentParser adds for wrong usage.
struct ToolError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) { self.description = description }
}
