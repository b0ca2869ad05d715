import FlatCache
import Foundation

/// The `outbox-churn` command: queues messages in the outbox of a cache and
/// delivers them, while a test kills it with SIGKILL at random moments, to a
/// "server" that is a file another process can check afterwards.
///
/// `flatcache-test-helper outbox-churn <folder> <server folder> <run> <count>`
/// queues `count` messages (request ids `r<run>-<seq>`, channels
/// `c<seq % 3>`), printing `accepted <request id>` after each `send` returns,
/// while an ``OutboxDelivery`` sends what waits (earlier runs' leftovers
/// first); then waits until the outbox is empty, prints `drained`, and exits 0.
enum OutboxChurn {
    static func start(folder: URL, server: URL, run: Int, count: Int) -> Never {
        Task.detached {
            do {
                try await churn(folder: folder, server: FileServer(folder: server, seed: UInt64(run + 1)), run: run, count: count)
                exit(0)
            } catch {
                fail("outbox-churn: \(error)", status: 1)
            }
        }
        dispatchMain()
    }

    static func churn(folder: URL, server: FileServer, run: Int, count: Int) async throws {
        let cache = try ChatCache(directory: folder)
        let delivery = OutboxDelivery(
            outbox: cache.outbox, sender: server, store: cache.messages,
            retry: SendRetryPolicy(initialDelay: .milliseconds(1), maximumDelay: .milliseconds(10)))
        await delivery.start()
        for seq in 0..<count {
            let requestID = "r\(run)-\(seq)"
            let message = ChatMessage(messageID: 0, channelURL: "c\(seq % 3)", createdAt: 1_000, text: requestID)
            try await cache.outbox.send(message, requestID: requestID)
            FileHandle.standardOutput.write(Data("accepted \(requestID)\n".utf8))  // one write: a line is whole or absent
        }
        try await delivery.waitUntilSent()
        FileHandle.standardOutput.write(Data("drained\n".utf8))
    }
}

/// A chat server kept in `<folder>/server.log`, one line per message it
/// made (`<request id> <channel> <id>`), under an exclusive `flock`: a
/// request id it already has is answered with the message it made then. It
/// loses one answer in four after acting, and fails one send in ten before.
final class FileServer: MessageSender, @unchecked Sendable {
    private let log: String
    private let lockPath: String
    private let lock = NSLock()
    private var random: XorShift  // guarded by lock

    init(folder: URL, seed: UInt64) {
        log = folder.appendingPathComponent("server.log").path
        lockPath = folder.appendingPathComponent("server.lock").path
        random = XorShift(seed: seed)
    }

    private func roll(_ bound: Int) -> Int { lock.withLock { random.next(bound) } }

    func send(_ message: ChatMessage, requestID: String) async throws -> ChatMessage {
        try await Task.sleep(for: .microseconds(roll(2_000)))  // time on the wire: kills land during sends too
        if roll(10) == 0 { throw SendFailure.temporary("the file server failed before acting") }
        let id = try made(requestID: requestID, channel: message.channelURL)
        var copy = message
        copy.messageID = id
        copy.requestID = requestID
        if roll(4) == 0 { throw SendFailure.offline("the file server acted, and its answer was lost") }
        return copy
    }

    /// The id of the message made for `requestID`, made now if there is none.
    private func made(requestID: String, channel: String) throws -> Int64 {
        let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw SendFailure.temporary("cannot open \(lockPath)") }
        defer { close(descriptor) }
        while flock(descriptor, LOCK_EX) != 0 { if errno != EINTR { throw SendFailure.temporary("cannot lock") } }
        let lines = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n")
        for (index, line) in lines.enumerated() where line.split(separator: " ").first.map(String.init) == requestID {
            return Int64(index + 1)
        }
        let line = Data("\(requestID) \(channel) \(lines.count + 1)\n".utf8)
        let file = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard file >= 0 else { throw SendFailure.temporary("cannot open \(log)") }
        defer { close(file) }
        guard line.withUnsafeBytes({ write(file, $0.baseAddress, $0.count) }) == line.count else {
            throw SendFailure.temporary("cannot write \(log)")
        }
        return Int64(lines.count + 1)
    }
}
