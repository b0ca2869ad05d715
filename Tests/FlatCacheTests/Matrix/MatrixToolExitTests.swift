import FlatCache
import FlatCacheMatrix
import Foundation
import Testing

/// `flatcache-matrix` ends within its documented bounds against Synapse
/// (issue 31): a plain `sync` that sends queued messages exits by itself,
/// and `sync --follow` exits within 10 s of Ctrl-C. In `MatrixTests` (its
/// Synapse, serialized), in a file of its own.
extension MatrixTests {
    @Test func twelveRoundsOfQueuedMessagesAreEachSentOnceInOrderByASyncThatExitsByItself() async throws {
        // Given a room the sample's sync cached
        let mina = try await Synapse.newUser("mina")
        let room = try await mina.createRoom("Rounds")
        let homeserver = try Synapse.url().absoluteString
        let sync = ["sync", "--homeserver", homeserver, "--access-token", mina.client.accessToken ?? "", "--directory", folder.url.path]
        let first = try ToolRun(sync, of: "flatcache-matrix", in: folder.url, timeLimit: .seconds(90))
        #expect(first.status == 0, "\(first.stdout)\(first.stderr)")

        var queued = [String]()
        for round in 0..<12 {
            // When 30 messages are queued without the server (the outbox alone), and a plain sync runs
            let cache = try MatrixCache(directory: folder.url, configuration: Configuration(maxMessagesPerChannel: 10_000))
            for index in 0..<30 {
                let body = "round \(round) message \(index)"
                _ = try await cache.outbox.send(
                    MatrixMessage(eventID: "", roomID: room, sender: mina.userID, createdAt: 0, msgtype: "m.text", body: body))
                queued.append(body)
            }
            try await cache.close()
            // Then it exits by itself (0, not killed at the limit, not 3 from its exit deadline), having sent them
            let run = try ToolRun(sync + ["--send-wait", "60"], of: "flatcache-matrix", in: folder.url, timeLimit: .seconds(120))
            #expect(run.status == 0, "round \(round): \(run.stdout)\(run.stderr)")
            #expect(run.stdout.components(separatedBy: "  sent $").count - 1 == 30, "round \(round): \(run.stdout)")
            if run.status != 0 { break }
        }

        // and the server holds each message once, in the order queued
        let delivered = try await mina.serverMessages(in: room).map(\.body).filter { $0.hasPrefix("round ") }
        #expect(delivered == queued)
    }

    @Test func syncFollowFollowsEveryRoomThenExitsWithinTenSecondsOfCtrlC() async throws {
        // Given an account of three rooms
        let mina = try await Synapse.newUser("mina")
        var rooms = [String]()
        for name in ["One", "Two", "Three"] { rooms.append(try await mina.createRoom(name)) }
        let homeserver = try Synapse.url().absoluteString
        let follow = try FollowingTool(
            ["sync", "--follow", "--homeserver", homeserver, "--access-token", mina.client.accessToken ?? "",
             "--directory", folder.url.path])
        defer { follow.kill() }
        #expect(await follow.waitForOutput("following live events", upTo: .seconds(90)), "\(follow.output)")

        // When a message comes into each room, it shows as a live line of that room
        for (index, room) in rooms.enumerated() { try await mina.send("live \(index)", in: room) }
        for (index, room) in rooms.enumerated() {
            #expect(await follow.waitForOutput("live \(index)", upTo: .seconds(30)), "\(room): \(follow.output)")
        }

        // and after Ctrl-C it exits with status 0 within 10 s
        let interrupted = ContinuousClock.now
        follow.interrupt()
        let ended = await follow.waitForExit(upTo: .seconds(15))
        let took = ContinuousClock.now - interrupted
        #expect(ended && took < .seconds(10), "took \(took): \(follow.output)")
        #expect(ended && follow.status == 0, "\(follow.output)")
        #expect(await follow.waitForOutput("cache closed", upTo: .seconds(2)), "\(follow.output)")
    }
}

/// `flatcache-matrix` run in the background: its output read as it comes, interrupted like Ctrl-C.
final class FollowingTool: @unchecked Sendable {
    private let process = Process()
    private let lock = NSLock()
    // Guarded by `lock`.
    private var text = ""

    init(_ arguments: [String]) throws {
        // Line-buffered (stdbuf execs the tool in its own process): a pipe would hold its lines back.
        process.executableURL = URL(fileURLWithPath: "/usr/bin/stdbuf")
        process.arguments = ["-oL", Executables.url("flatcache-matrix").path] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self, !data.isEmpty else { return }
            lock.withLock { text += String(decoding: data, as: UTF8.self) }
        }
        try process.run()
    }

    var output: String { lock.withLock { text } }
    var status: Int32 { process.terminationStatus }

    /// Whether `needle` was printed within `bound`.
    func waitForOutput(_ needle: String, upTo bound: Duration) async -> Bool {
        let deadline = ContinuousClock.now + bound
        while !output.contains(needle), process.isRunning, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(50))
        }
        return output.contains(needle)
    }

    /// Whether the process ended within `bound`.
    func waitForExit(upTo bound: Duration) async -> Bool {
        let deadline = ContinuousClock.now + bound
        while process.isRunning, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        return !process.isRunning
    }

    /// SIGINT, as Ctrl-C sends.
    func interrupt() { process.interrupt() }

    /// Ends it for good if it still runs.
    func kill() {
        guard process.isRunning else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
