import ArgumentParser
import BenchmarkKit
import FlatCache
import FlatCacheMatrix
import Foundation

/// `flatcache-bench matrix`: a room of 1,000 messages on a real Synapse,
/// served by Synapse, cached by a `MessageCollection`, and shown again from
/// the cache with the server gone from the path; and the first
/// `flatcache-matrix sync` of a 63-room account against Synapse answering
/// its requests alone (``AccountFirstSync``). Reported, not checked
/// against a target (two processes share the machine's two cores).
struct MatrixRun: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "matrix",
        abstract: "Time caching a 1,000-message room from Synapse and showing it offline, against Synapse serving it.",
        discussion: """
            Needs a running Synapse from Scripts/synapse:
              Scripts/synapse start
              Benchmarks/run matrix --homeserver "$(Scripts/synapse url)" --as-token "$(Scripts/synapse as-token)"
            The account's first sync runs the flatcache-matrix executable (--tool), which Benchmarks/run \
            matrix builds in release; its requests are recorded through Benchmarks/Scripts/record-requests.py \
            (python3) and replayed with curl.
            """)

    @Option(help: "The homeserver's URL (Scripts/synapse url).")
    var homeserver: String

    @Option(help: "The application service token that registers the benchmark's user (Scripts/synapse as-token).")
    var asToken: String

    @Option(help: "Messages in the room.")
    var messages = 1_000

    @Option(help: "Measured rounds, after one warm-up round.")
    var rounds = 5

    @Option(help: "What to time: room (a 1,000-message room), account (the first sync of a 63-room account), or both.")
    var part = "both"

    @Option(help: "The flatcache-matrix executable the account's first sync runs (Benchmarks/run matrix builds it).")
    var tool = "../.build/release/flatcache-matrix"

    func validate() throws {
        guard URL(string: homeserver)?.host != nil else { throw ValidationError("--homeserver must be a URL.") }
        guard messages >= 100 else { throw ValidationError("--messages must be 100 or more.") }
        guard rounds >= 1 else { throw ValidationError("--rounds must be 1 or more.") }
        guard ["room", "account", "both"].contains(part) else { throw ValidationError("--part must be room, account or both.") }
    }

    /// What is timed, in the order of the table.
    enum Case: String, CaseIterable {
        case synapseServes = "Synapse serves the room: `/messages` pages of 100, decoded"
        case cacheFromSynapse = "Cache it: a `MessageCollection` (pages of 100) `start()`, `loadPrevious()` to the first message, `close()`"
        case offlineFirstScreen = "Show it offline: open the cache, newest 30 (`loadLatest`)"
        case offlineWholeRoom = "Show it offline: open the cache, every message (`load(in:)`)"
    }

    func run() async throws {
        if part != "account" { try await runRoom() }
        if part != "room" {
            let account = AccountFirstSync(
                homeserver: URL(string: homeserver)!, asToken: asToken, tool: URL(fileURLWithPath: tool), rounds: rounds)
            print(try await account.run())
        }
    }

    private func runRoom() async throws {
        let client = try MatrixClient(homeserver: URL(string: homeserver)!, accessToken: asToken)
        let (user, roomID) = try await seed(with: client)
        let source = MatrixSource(client: user)
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("flatcache-bench-matrix-\(getpid())")
        defer { try? FileManager.default.removeItem(at: scratch) }

        var samples = [Case: Samples]()
        for round in 0...rounds {
            progress("matrix: round \(round == 0 ? "warm-up" : "\(round) of \(rounds)")")
            let folder = scratch.appendingPathComponent("round-\(round)")
            var timings = [Case: Double]()
            timings[.synapseServes] = try await seconds { try await serve(roomID, client: user) }
            timings[.cacheFromSynapse] = try await seconds { try await cache(roomID, source: source, in: folder) }
            timings[.offlineFirstScreen] = try await seconds { try await showNewest(roomID, in: folder) }
            timings[.offlineWholeRoom] = try await seconds { try await showAll(roomID, in: folder) }
            if round > 0 { for (key, value) in timings { samples[key, default: Samples()].seconds.append(value) } }
        }
        print(table(samples))
    }

    // MARK: - The room

    /// A new user (through the application service) and a room of `messages` messages.
    private func seed(with service: MatrixClient) async throws -> (MatrixClient, String) {
        struct Registered: Decodable { var access_token: String }
        struct Created: Decodable { var room_id: String }
        let registered: Registered = try await service.post(
            ["register"], body: ["type": "m.login.application_service", "username": "seed_bench_\(UUID().uuidString.prefix(8).lowercased())"])
        let user = service.authenticated(with: registered.access_token)
        let created: Created = try await user.post(["createRoom"], body: ["name": "Benchmark", "preset": "private_chat"])
        let count = messages
        progress("matrix: sending \(count) messages to \(created.room_id)")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for batch in stride(from: 0, to: count, by: 8) {
                for index in batch..<min(batch + 8, count) {
                    group.addTask {
                        struct Sent: Decodable { var event_id: String }
                        let _: Sent = try await user.put(
                            ["rooms", created.room_id, "send", "m.room.message", UUID().uuidString],
                            body: ["msgtype": "m.text", "body": "Message \(index): a line of chat of an ordinary length, about eighty bytes."])
                    }
                }
                try await group.waitForAll()
                if (batch + 8) % 200 == 0 { progress("matrix: \(batch + 8) sent") }
            }
        }
        return (user, created.room_id)
    }

    // MARK: - The timed cases

    private struct Page: Decodable {
        var chunk: [MatrixEvent]
        var end: String?
    }

    /// Pages the room back from its newest event until `messages` messages came, as a client without a cache would.
    private func serve(_ roomID: String, client: MatrixClient) async throws {
        var from: String?
        var count = 0
        for _ in 0..<1_000 where count < messages {
            var query = [("dir", "b"), ("limit", "100"), ("filter", #"{"types":["m.room.message"]}"#)]
            if let from { query.append(("from", from)) }
            let page: Page = try await client.get(["rooms", roomID, "messages"], query: query)
            count += page.chunk.compactMap { $0.message(in: roomID) }.count
            guard let end = page.end, !page.chunk.isEmpty else { break }
            from = end
        }
        guard count == messages else { throw ValidationError("Synapse served \(count) messages, not \(messages)") }
    }

    private func cache(_ roomID: String, source: MatrixSource, in folder: URL) async throws {
        let cache = try MatrixCache(directory: folder, configuration: Configuration(maxMessagesPerChannel: messages * 2))
        let collection = try MessageCollection(channelURL: roomID, store: cache.messages, source: source, pageSize: 100)
        try await collection.start()
        for _ in 0..<(messages / 100 + 2) where await collection.hasPrevious { try await collection.loadPrevious() }
        let shown = await collection.messages.count
        await collection.dispose()
        try await cache.close()
        guard shown == messages else { throw ValidationError("the collection shows \(shown) messages, not \(messages)") }
    }

    private func showNewest(_ roomID: String, in folder: URL) async throws {
        let cache = try MatrixCache(directory: folder, configuration: Configuration(maxMessagesPerChannel: messages * 2))
        let page = try await cache.messages.loadLatest(in: roomID, limit: 30)
        guard page.count == 30 else { throw ValidationError("the cache's newest page has \(page.count) messages") }
    }

    private func showAll(_ roomID: String, in folder: URL) async throws {
        let cache = try MatrixCache(directory: folder, configuration: Configuration(maxMessagesPerChannel: messages * 2))
        let all = try await cache.messages.load(in: roomID)
        guard all.count == messages else { throw ValidationError("the cache holds \(all.count) messages, not \(messages)") }
    }

    private func seconds(_ body: () async throws -> Void) async throws -> Double {
        let start = ContinuousClock.now
        try await body()
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    // MARK: - The report

    private func table(_ samples: [Case: Samples]) -> String {
        let served = samples[.synapseServes]?.median ?? .nan
        var lines = [
            "## A room of \(messages) messages from Synapse (median of \(rounds), min–max; one run)",
            "",
            "| What | Time | vs Synapse serving it |",
            "|---|---|---|",
        ]
        for key in Case.allCases {
            guard let timing = samples[key] else { continue }
            let ratio = timing.median / served
            let shown = key == .synapseServes ? "1×" : ratio >= 1 ? String(format: "%.2f×", ratio) : "\(Int((1 / ratio).rounded()))× faster"
            lines.append("| \(key.rawValue) | \(timing.summary) | \(shown) |")
        }
        return lines.joined(separator: "\n")
    }
}
