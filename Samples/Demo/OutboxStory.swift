import ArgumentParser
import FlatCache
import FlatCacheTesting
import Foundation

/// `flatcache-demo outbox`: messages typed offline survive the app's kill,
/// then reach the simulated server exactly once, one line per event, the
/// same every run.
struct OutboxStory: AsyncParsableCommand {
    /// Its name, and the help that says what it does.
    static let configuration = CommandConfiguration(
        commandName: "outbox",
        abstract: "Tell the outbox's story against a simulated server, one line per event.",
        discussion: """
            Offline, the app (this program again, as a child process) queues three messages and is \
            killed with SIGKILL; a new cache on the same folder finds them. Online, a send loop \
            delivers them in order; an answer lost after the server accepted is retried without a \
            duplicate; a message refused for good is shown failed, then edited and retried; another \
            is cancelled. Each step checks what it claims (the server holds each message once) and the \
            story exits with an error when a check fails or an expected event does not come within 5 seconds. \
            The cache folder is emptied first, so every run tells the same story.
            """)

    /// Where the cache lives; `nil` for the default folder.
    @Option(name: .long, help: "The cache folder, emptied first. (default: <user caches>/flatcache-demo-outbox)")
    var directory: String?

    /// Tells the story, step by step, then closes the cache.
    func run() async throws {
        let folder = directory.map { URL(fileURLWithPath: $0) } ?? Demo.cachesFolder(named: "flatcache-demo-outbox")
        print("FlatCache demo · the outbox against a simulated server")
        print("cache folder: \(folder.path)")
        try await OutboxSteps.empty(folder)
        let server = SimulatedChatServer()
        try await typeOfflineAndKill(on: folder, server: server)
        let steps = try await OutboxSteps.restart(on: folder, server: server)
        try await steps.online()
        try await steps.answerLost()
        try await steps.refused()
        try await steps.editAndRetry()
        try await steps.cancel()
        try await steps.finish()
    }

    /// Step 1: offline, the app queues three messages and is killed.
    private func typeOfflineAndKill(on folder: URL, server: SimulatedChatServer) async throws {
        StoryLines.heading(1, "Offline: Ana types three messages, then the app is killed")
        await server.setOffline(true)
        StoryLines.say("server", "offline")
        StoryLines.say("call", "run the app (`flatcache-demo outbox-app`, a child process): outbox.send(_:requestID:) x3")
        let queued = try await OutboxApp.runAndKill(on: folder)
        for (requestID, message) in OutboxSeed.typedOffline where queued.contains(requestID) {
            StoryLines.say("app", "send(\(StoryLines.quoted(message)), requestID: \"\(requestID)\") returned: on disk")
        }
        StoryLines.say("kill", "SIGKILL (kill -9) the app after its third send returned: it ended by signal 9")
    }
}
