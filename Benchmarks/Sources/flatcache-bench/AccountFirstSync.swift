import BenchmarkKit
import FlatCacheMatrix
import Foundation

/// The first `flatcache-matrix sync` of a 63-room account (``BigAccount``:
/// 60 rooms of 2 messages, 3 of 500), the built tool as a child process,
/// against Synapse answering the same requests alone: the requests of one
/// such sync, recorded through a proxy (`Benchmarks/Scripts/record-requests.py`),
/// replayed one after the other by one `curl` (one kept-alive connection).
/// Long polls (`/sync` with a timeout) are left out of the replay: the sync
/// never waits for their answers. Also times the two ways to fetch every
/// room's newest page in one request: `/sync` with a timeline limit, and
/// simplified sliding sync (MSC4186).
struct AccountFirstSync {
    let homeserver: URL
    let asToken: String
    let tool: URL
    let rounds: Int

    /// One recorded request.
    private struct Recorded: Decodable {
        var method: String
        var path: String
        var headers: [String: String]
        var body: String
    }

    func run() async throws -> String {
        guard FileManager.default.isExecutableFile(atPath: tool.path) else {
            throw BenchFailure("no flatcache-matrix at \(tool.path): build it (Benchmarks/run matrix does)")
        }
        progress("matrix account: seeding 63 rooms")
        let account = try await BigAccount.seed(homeserver: homeserver, asToken: asToken) { progress("matrix account: \($0)") }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("flatcache-bench-account-\(getpid())")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }

        // The requests of one first sync, through the recording proxy.
        let log = scratch.appendingPathComponent("requests.jsonl")
        let recorded = try record(account, folder: scratch.appendingPathComponent("recorded"), log: log)
        let replayed = recorded.filter { !isLongPoll($0.path) }
        let config = scratch.appendingPathComponent("replay.curl")
        try curlConfig(replayed).write(to: config, atomically: true, encoding: .utf8)

        var syncs = [Double]()
        var replays = [Double]()
        var prefetchSyncs = [Double]()
        var slidingSyncs = [Double]()
        let prefetch = scratch.appendingPathComponent("prefetch.curl")
        let sliding = scratch.appendingPathComponent("sliding.curl")
        try curlConfig([oneSync(account)]).write(to: prefetch, atomically: true, encoding: .utf8)
        try curlConfig([slidingSync(account)]).write(to: sliding, atomically: true, encoding: .utf8)
        for round in 0...rounds {
            progress("matrix account: round \(round == 0 ? "warm-up" : "\(round) of \(rounds)")")
            let folder = scratch.appendingPathComponent("round-\(round)")
            let sync = try seconds { try firstSync(account, homeserver: homeserver, folder: folder) }
            let replay = try seconds { try runCurl(config) }
            let one = try seconds { try runCurl(prefetch) }
            let sss = try seconds { try runCurl(sliding) }
            if round > 0 {
                syncs.append(sync)
                replays.append(replay)
                prefetchSyncs.append(one)
                slidingSyncs.append(sss)
            }
        }
        return table(
            seeding: account.seedingSeconds, syncs: syncs, replays: replays, recorded: recorded, replayed: replayed.count,
            prefetch: prefetchSyncs, sliding: slidingSyncs)
    }

    // MARK: - Runs

    private func firstSync(_ account: BigAccount, homeserver: URL, folder: URL) throws {
        let (status, output) = try runTool(
            ["sync", "--homeserver", homeserver.absoluteString, "--access-token", account.accessToken, "--directory", folder.path])
        guard status == 0, output.contains("[63/63]") else {
            throw BenchFailure("flatcache-matrix sync exited \(status): \(output.suffix(1_000))")
        }
    }

    private func record(_ account: BigAccount, folder: URL, log: URL) throws -> [Recorded] {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Scripts/record-requests.py")
        let proxy = Process()
        proxy.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        proxy.arguments = ["python3", script.path, homeserver.absoluteString, log.path]
        let out = Pipe()
        proxy.standardOutput = out
        proxy.standardError = FileHandle.nullDevice
        try proxy.run()
        defer {
            // SIGKILL: a child of this process starts with SIGTERM blocked (Foundation on Linux).
            kill(proxy.processIdentifier, SIGKILL)
            proxy.waitUntilExit()
        }
        let line = String(decoding: out.fileHandleForReading.availableLine(), as: UTF8.self)
        guard let port = Int(line.trimmingCharacters(in: .whitespacesAndNewlines)),
            let through = URL(string: "http://127.0.0.1:\(port)")
        else { throw BenchFailure("the recording proxy did not start: '\(line)'") }
        try firstSync(account, homeserver: through, folder: folder)
        let text = try String(contentsOf: log, encoding: .utf8)
        return try text.split(separator: "\n").map { try JSONDecoder().decode(Recorded.self, from: Data($0.utf8)) }
    }

    private func isLongPoll(_ path: String) -> Bool {
        guard path.contains("/sync?"), let query = URLComponents(string: path)?.queryItems else { return false }
        return query.contains { $0.name == "timeout" && $0.value != "0" }
    }

    /// The prefetch's request: one `/sync`, every room's newest 121 message events.
    private func oneSync(_ account: BigAccount) -> Recorded {
        var components = URLComponents()
        components.path = "/_matrix/client/v3/sync"
        components.queryItems = [
            URLQueryItem(name: "timeout", value: "0"),
            URLQueryItem(name: "filter", value: MatrixSourceFilters.prefetch),
        ]
        let path = components.percentEncodedPath + "?" + (components.percentEncodedQuery ?? "")
        return Recorded(method: "GET", path: path, headers: ["Authorization": "Bearer \(account.accessToken)"], body: "")
    }

    /// The same with simplified sliding sync: one list of every room, 71 timeline events each.
    private func slidingSync(_ account: BigAccount) -> Recorded {
        let body = #"{"lists":{"all":{"ranges":[[0,99]],"required_state":[],"timeline_limit":121}}}"#
        return Recorded(
            method: "POST", path: "/_matrix/client/unstable/org.matrix.simplified_msc3575/sync",
            headers: ["Authorization": "Bearer \(account.accessToken)", "Content-Type": "application/json"],
            body: Data(body.utf8).base64EncodedString())
    }

    private func curlConfig(_ requests: [Recorded]) -> String {
        let base = homeserver.absoluteString.hasSuffix("/") ? String(homeserver.absoluteString.dropLast()) : homeserver.absoluteString
        func quoted(_ text: String) -> String {
            "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
        var lines = [String]()
        for (index, request) in requests.enumerated() {
            if index > 0 { lines.append("next") }
            lines.append("url = \(quoted(base + request.path))")
            lines.append("request = \(quoted(request.method))")
            lines.append("output = \"/dev/null\"")
            lines.append("silent")
            for (key, value) in request.headers.sorted(by: { $0.key < $1.key }) { lines.append("header = \(quoted("\(key): \(value)"))") }
            if let body = Data(base64Encoded: request.body), !body.isEmpty {
                lines.append("data-binary = \(quoted(String(decoding: body, as: UTF8.self)))")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private func runCurl(_ config: URL) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["curl", "--config", config.path]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw BenchFailure("curl exited \(process.terminationStatus)") }
    }

    private func runTool(_ arguments: [String]) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = tool
        process.arguments = arguments
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("flatcache-bench-tool-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: output) }
        let handle = try FileHandle(forWritingTo: output)
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        // Bounded: a sync that hangs fails the benchmark instead.
        let deadline = Date().addingTimeInterval(180)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        try handle.close()
        return (process.terminationStatus, (try? String(contentsOf: output, encoding: .utf8)) ?? "")
    }

    private func seconds(_ body: () throws -> Void) throws -> Double {
        let start = ContinuousClock.now
        try body()
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    // MARK: - The report

    private func table(
        seeding: Double, syncs: [Double], replays: [Double], recorded: [Recorded], replayed: Int,
        prefetch: [Double], sliding: [Double]
    ) -> String {
        let sync = Samples(seconds: syncs)
        let replay = Samples(seconds: replays)
        var kinds = [String: Int]()
        for request in recorded {
            let path = request.path.split(separator: "?").first.map(String.init) ?? request.path
            let parts = path.split(separator: "/").map(String.init)
            let kind: String
            if isLongPoll(request.path) {
                kind = "/sync long poll (not replayed)"
            } else if let rooms = parts.firstIndex(of: "rooms"), parts.count > rooms + 2 {
                kind = "/rooms/…/\(parts[rooms + 2])"
            } else {
                kind = "/" + parts.suffix(from: min(3, parts.count)).prefix(1).joined()
            }
            kinds[kind, default: 0] += 1
        }
        let counts = kinds.sorted { ($1.value, $0.key) < ($0.value, $1.key) }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        let ratio = sync.median / replay.median
        return [
            "## The first sync of a 63-room account (60 rooms of 2 messages, 3 of 500; median of \(rounds), min–max; one run)",
            "",
            "Seeding the account through the application service took \(String(format: "%.1f", seeding)) s.",
            "",
            "| What | Time | vs Synapse alone |",
            "|---|---|---|",
            "| Synapse answers the sync's \(replayed) requests alone (`curl`, one after the other) | \(replay.summary) | 1× |",
            "| `flatcache-matrix sync` (a new folder, the process included) | \(sync.summary) | \(String(format: "%.2f×", ratio)) |",
            "| One `/sync`: every room's newest 121 message events (the prefetch) | \(Samples(seconds: prefetch).summary) | |",
            "| One simplified sliding sync (MSC4186): every room's newest 121 events | \(Samples(seconds: sliding).summary) | |",
            "",
            "Requests of one first sync: \(recorded.count) (\(counts)).",
        ].joined(separator: "\n")
    }
}

/// The prefetch's `/sync` filter, as `MatrixSource.prefetchNewestPages(eventsPerRoom: 121)` sends it.
enum MatrixSourceFilters {
    static let prefetch =
        #"{"room":{"timeline":{"limit":121,"types":["m.room.message"]},"state":{"types":[]},"#
        + #""ephemeral":{"not_types":["*"]},"account_data":{"not_types":["*"]}},"#
        + #""presence":{"not_types":["*"]},"account_data":{"not_types":["*"]}}"#
}

/// A benchmark that could not run as asked.
struct BenchFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension FileHandle {
    /// Bytes up to the first newline (or the end), read one at a time: the proxy's first line.
    func availableLine() -> Data {
        var line = Data()
        for _ in 0..<64 {
            let byte = readData(ofLength: 1)
            if byte.isEmpty || byte == Data("\n".utf8) { break }
            line.append(byte)
        }
        return line
    }
}
