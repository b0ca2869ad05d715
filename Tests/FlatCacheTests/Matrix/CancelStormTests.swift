import FlatCacheMatrix
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing

/// swift-corelibs-foundation #5412: on Linux, cancelling a Swift task while
/// its `URLSession.data(for:)` answer arrives can deadlock. `MatrixClient`
/// works around it (`HTTPExchange`); this runs `flatcache-test-helper
/// cancel-storm` (200 long polls held by a local server, then answered and
/// cancelled at the same moments, 3 rounds) in a child process, so that a
/// deadlock fails the test, with the child's thread stacks, instead of
/// hanging the suite.
@Suite(.serialized, .timeLimit(.minutes(3))) struct CancelStormTests {
    /// A run takes about 3 s on a 2-core machine; a deadlocked one never ends.
    static let bound: Duration = .seconds(60)

    @Test func longPollsCancelledAsTheirAnswersArriveAllEnd() async throws {
        try await storm("client", rounds: 3)
    }

    /// An app offline whose views come and go: requests to a port where
    /// nothing listens, each cancelled within 300 µs of its start (20 rounds
    /// of 200), through a client made with an ephemeral configuration, which
    /// holds a `URLCache` the client must leave out. While the client's
    /// session held a `URLCache`, FoundationNetworking trapped the process
    /// here in every run ("Trying to access a behaviour for a task that in
    /// not in the registry"); a run takes about 1 s.
    @Test func requestsCancelledAsTheirConnectionIsRefusedNeverTrap() async throws {
        try await storm("refused", rounds: 20)
    }

    /// The default configuration has no `URLCache`; a client made with one
    /// that has leaves the caller's configuration as it was.
    @Test func theDefaultConfigurationHasNoURLCacheAndACallersIsLeftAlone() throws {
        #expect(MatrixClient.defaultConfiguration.urlCache == nil)
        let withCache = URLSessionConfiguration.ephemeral
        #expect(withCache.urlCache != nil)
        _ = try MatrixClient(homeserver: URL(string: "http://127.0.0.1:9")!, accessToken: nil, configuration: withCache)
        #expect(withCache.urlCache != nil, "the caller's configuration is left as it was")
    }

    /// Runs `cancel-storm <mode> <rounds> 200` in a child: it must end within
    /// ``bound`` (else its stacks are printed and it is killed), exit 0, and
    /// report every round.
    private func storm(_ mode: String, rounds: Int) async throws {
        let run = try await ChildRun.start(Executables.url("flatcache-test-helper"), ["cancel-storm", mode, "\(rounds)", "200"])
        let ended = await run.wait(upTo: Self.bound)
        if !ended {
            let stacks = run.stacks()
            run.kill()
            Issue.record("cancel-storm \(mode) did not end within \(Self.bound): a deadlock. Stacks:\n\(stacks)")
            return
        }
        let output = run.output()
        #expect(run.status == 0, "cancel-storm \(mode) failed: \(output)")
        #expect(output.split(separator: "\n").filter { $0.hasPrefix("round ") }.count == rounds)
        #expect(output.hasSuffix("ok\n"), "\(output)")
    }
}

/// A child process whose end is awaited with a bound, and whose threads' stacks gdb can show.
final class ChildRun: @unchecked Sendable {
    private let process = Process()
    private let pipe = Pipe()

    static func start(_ executable: URL, _ arguments: [String]) async throws -> ChildRun {
        let run = ChildRun()
        run.process.executableURL = executable
        run.process.arguments = arguments
        run.process.standardOutput = run.pipe
        run.process.standardError = run.pipe
        try run.process.run()
        return run
    }

    /// Whether the process ended within `bound` (polled every 50 ms).
    func wait(upTo bound: Duration) async -> Bool {
        let deadline = ContinuousClock.now + bound
        while process.isRunning, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(50))
        }
        return !process.isRunning
    }

    var status: Int32 { process.terminationStatus }

    /// What it printed (read once it ended, or was killed).
    func output() -> String {
        String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }

    /// The frames of every thread that hold a lock the deadlock is about
    /// (URLSession, dispatch, task status), as gdb shows them; at most 60 lines.
    func stacks() -> String {
        let gdb = Process()
        gdb.executableURL = URL(fileURLWithPath: "/usr/bin/gdb")
        gdb.arguments = ["-p", String(process.processIdentifier), "-batch", "-ex", "thread apply all bt"]
        let out = Pipe()
        gdb.standardOutput = out
        gdb.standardError = FileHandle.nullDevice
        guard (try? gdb.run()) != nil else { return "(gdb did not start)" }
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        gdb.waitUntilExit()
        let wanted = ["Thread ", "cancel", "StatusRecord", "_dispatch_sync", "URLSession", "CancelStorm"]
        return text.split(separator: "\n").filter { line in wanted.contains { line.contains($0) } }
            .prefix(60).joined(separator: "\n")
    }

    func kill() {
        process.terminate()
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}
