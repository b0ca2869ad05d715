import Foundation
import Testing

/// `flatcache-demo outbox`, run as a program as a user would: it succeeds,
/// tells each step of the story (the app killed by SIGKILL, the lost answer
/// retried without a duplicate, the refused message failed, edited and
/// retried, another cancelled), and prints the same lines every run.
@Suite(.timeLimit(.minutes(2))) struct DemoOutboxStoryTests {
    let folder: TemporaryFolder

    init() throws {
        folder = try TemporaryFolder()
    }

    /// Runs the story on the folder's `cache`; its output with the folder's path replaced by `<folder>`.
    func story() async throws -> (status: Int32, lines: [String], stderr: String) {
        let (cache, directory) = (folder.appending("cache").path, folder.url)
        let run = try await offThePool { try ToolRun(["outbox", "--directory", cache], of: "flatcache-demo", in: directory) }
        let text = run.stdout.replacingOccurrences(of: folder.url.path, with: "<folder>")
        return (run.status, text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init), run.stderr)
    }

    @Test func theOutboxStoryHoldsAndIsTheSameEveryRun() async throws {
        // When the story runs
        let first = try await story()

        // Then it succeeded: every step's check held
        #expect(first.status == 0, "stderr: \(first.stderr)")
        let key = [
            "cache folder: <folder>/cache",
            "  kill   SIGKILL (kill -9) the app after its third send returned: it ended by signal 9",
            "  outbox 3 entries, in the order typed:",
            "         ana-1 pending \"Landed, on the train now\"",
            "  server General holds #1 \"Landed, on the train now\", #2 \"No signal in the tunnel\", #3 \"Who has the map?\", in the order typed",
            "  server holds ana-4 once: #4 \"See you at 8 at the station\" (4 messages in General)",
            "  outbox ana-5 failed (links are not allowed in General, 1 attempt) \"Tickets: http://tickets.example/cheap\"",
            "  server holds ana-5 once, edited: #6 \"Tickets are at the front desk\"",
            "  server never had ana-7",
        ]
        for line in key { #expect(first.lines.contains(line), "missing: \(line)") }
        let done = try #require(first.lines.last { $0.hasPrefix("Done · ") })
        #expect(done.contains("the server holds 6 messages, each request id once (ana-1, ana-2, ana-3, ana-4, ana-6, ana-5)"))

        // and a second run, on the folder the first left, tells the same story line for line
        let second = try await story()
        #expect(second.status == 0, "stderr: \(second.stderr)")
        #expect(second.lines == first.lines)
    }
}
