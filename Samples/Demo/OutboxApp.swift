import ArgumentParser
import FlatCache
import Foundation

/// `flatcache-demo outbox-app` (hidden): the app of the outbox story, run by
/// it as a child process. Offline, it queues the three messages Ana types,
/// says so on standard output after each `send` returned, then waits to be
/// killed: the story kills it with SIGKILL after the third line.
struct OutboxApp: AsyncParsableCommand {
    /// Hidden from the help: only the outbox story runs it.
    static let configuration = CommandConfiguration(
        commandName: "outbox-app",
        abstract: "The outbox story's app: queues three messages, then waits to be killed.",
        shouldDisplay: false)

    /// The story's cache folder.
    @Option(name: .long, help: "The cache folder.")
    var directory: String

    /// Queues the three messages, a line after each, then sleeps; exits 1 if no one kills it within a minute.
    func run() async throws {
        let cache = try ChatCache(directory: URL(fileURLWithPath: directory))
        for (requestID, message) in OutboxSeed.typedOffline {
            let entry = try await cache.outbox.send(message, requestID: requestID)
            print("queued \(entry.requestID)")
            fflush(nil)  // every stream: a pipe is fully buffered, and the story must see each line now
        }
        try await Task.sleep(for: .seconds(60))
        throw ExitCode(1)
    }

    /// Runs `flatcache-demo outbox-app` on `folder`, and kills it with
    /// SIGKILL as soon as it says it queued its third message.
    ///
    /// - Returns: The request ids it said it queued, in order.
    /// - Throws: ``StoryError/notHeld(_:)`` when it does not say so within
    ///   ``Transcript/patience``, or does not end by the kill.
    static func runAndKill(on folder: URL) async throws -> [String] {
        let process = Process()
        process.executableURL = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["outbox-app", "--directory", folder.path]
        let output = Pipe()
        process.standardOutput = output
        do { try process.run() } catch { throw StoryError.notHeld("the app could not be started: \(error)") }
        // A child that hangs is killed all the same; its lines then end early.
        let seconds = Int(Transcript.patience.components.seconds)
        DispatchQueue.global().asyncAfter(deadline: .now() + .seconds(seconds)) {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
        let lines = await Self.lines(OutboxSeed.typedOffline.count, from: output.fileHandleForReading)
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        let ids = lines.compactMap { $0.hasPrefix("queued ") ? String($0.dropFirst("queued ".count)) : nil }
        guard ids == OutboxSeed.typedOffline.map(\.requestID) else {
            throw StoryError.notHeld("the app said \(lines), not that it queued \(OutboxSeed.typedOffline.map(\.requestID))")
        }
        guard process.terminationReason == .uncaughtSignal, process.terminationStatus == SIGKILL else {
            throw StoryError.notHeld("the app ended with status \(process.terminationStatus), not by SIGKILL")
        }
        return ids
    }

    /// The first `count` lines `handle` gives, fewer if it ends first (the child died).
    private static func lines(_ count: Int, from handle: FileHandle) async -> [String] {
        await withCheckedContinuation { continuation in
            // Blocking reads, off the cooperative threads.
            DispatchQueue.global().async {
                var buffer = Data()
                var lines = [String]()
                while lines.count < count {
                    let chunk = handle.availableData
                    if chunk.isEmpty { break }
                    buffer.append(chunk)
                    while let newline = buffer.firstIndex(of: 0x0A) {
                        lines.append(String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self))
                        buffer = Data(buffer[(newline + 1)...])
                    }
                }
                continuation.resume(returning: lines)
            }
        }
    }
}
