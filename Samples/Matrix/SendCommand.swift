import ArgumentParser
import FlatCache
import FlatCacheMatrix
import Foundation

/// `flatcache-matrix send`: queues a text message in the folder's outbox and
/// sends it at once when the server answers; offline, it stays queued (exit 0)
/// and the next `sync` (or `sync --follow`) sends it, exactly once.
struct SendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Queue a text message for a room and send it; offline, it stays queued for the next 'sync'.",
        discussion: """
            The message is written to the folder's outbox (on disk before anything is sent), then \
            sent if the server answers within --wait seconds; otherwise it stays queued, and the \
            next 'flatcache-matrix sync' sends it. The outbox's request id is the Matrix transaction \
            id, so a message whose answer was lost is sent again without a duplicate, as long as the \
            same device sends it: use the same --access-token (a password login makes a new device \
            each time). --room takes a room id (works offline), a cached room's name (works \
            offline), or a name the server knows (online; a room of that name is created if none \
            is joined). \
            Exit bounds: every request to the homeserver ends within 30 seconds; sending is tried \
            for --wait seconds at most, and the command exits within 10 seconds after that. \
            Stopping that takes longer ends the process with status 3; the message stays queued.
            """)

    @Argument(help: "The message text.")
    var text: String

    @Option(name: .long, help: "The room: its id (!...:server), or a name (a room of that name is created if none is joined).")
    var room: String

    @Option(name: .long, help: "How long to try sending before leaving the message queued, in seconds; it exits at most 10 seconds later.")
    var wait = 20

    @OptionGroup var login: LoginOptions

    @OptionGroup var folder: FolderOption

    func validate() throws {
        guard wait >= 0 else { throw ValidationError("--wait must be 0 or more, not \(wait).") }
    }

    func run() async throws {
        let cache = try MatrixCache(directory: folder.url, configuration: Configuration(maxMessagesPerChannel: 10_000))
        do {
            try await queueAndSend(in: cache)
        } catch {
            try? await cache.close()
            throw error
        }
        try await cache.close()
    }

    private func queueAndSend(in cache: MatrixCache) async throws {
        var account: MatrixAccount?
        let roomID: String
        if room.hasPrefix("!") {
            roomID = room
        } else if let cached = try await cache.channels.load().first(where: { $0.name == room }) {
            roomID = cached.roomID
        } else {
            // Only the server knows the name: this needs it.
            let online = try await login.account()
            account = online
            roomID = try await Self.joinedOrCreatedRoom(named: room, account: online)
        }
        let message = MatrixMessage(
            eventID: "", roomID: roomID, sender: account?.userID ?? login.userID ?? "",
            createdAt: Int64(Date().timeIntervalSince1970 * 1_000), msgtype: "m.text", body: text)
        let entry = try await cache.outbox.send(message)
        print("queued \(entry.requestID) for \(roomID)")

        if account == nil {
            do {
                account = try await login.account()
            } catch let error as MatrixError where Self.meansOffline(error) {
                print("offline (\(error)): it stays queued; the next 'flatcache-matrix sync' sends it")
                return
            } catch {
                // A refused login (a wrong password, a revoked token): the message is queued all the same.
                throw ToolError("\(error); the message stays queued: a 'flatcache-matrix sync' that logs in sends it")
            }
        }
        guard let account else { return }
        let sending = OutboxSending(cache: cache, source: MatrixSource(client: account.client))
        await sending.start()
        await sending.waitUntilSent(within: .seconds(wait))
        // Stopping the delivery and closing the cache (in run()) take 10 s at most.
        ExitDeadline.arm(ExitDeadline.stopping, while: "stopping")
        await sending.stop()
    }

    /// Whether a login failed in a way that may pass (no answer, a server error, a rate limit,
    /// a soft logout): the message stays queued and the command succeeds.
    private static func meansOffline(_ error: MatrixError) -> Bool {
        if case .refused = MatrixSource.sendFailure(for: error) { return false }
        return true
    }

    /// The joined room named `name`, or a new private room of that name.
    private static func joinedOrCreatedRoom(named name: String, account: MatrixAccount) async throws -> String {
        let source = MatrixSource(client: account.client)
        if let joined = try await source.channels(from: nil, limit: 1_000).channels.first(where: { $0.name == name }) {
            return joined.roomID
        }
        let created: Created = try await account.client.post(["createRoom"], body: ["name": name, "preset": "private_chat"])
        print("created room \(name) (\(created.roomID))")
        return created.roomID
    }

    private struct Created: Decodable {
        var roomID: String
        enum CodingKeys: String, CodingKey { case roomID = "room_id" }
    }
}
