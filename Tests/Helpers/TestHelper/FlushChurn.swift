import FlatCache
import Foundation

/// The `flush-churn` command: saves through the `async` API with write-behind
/// on (the default ``Configuration/writeDelay``), calls `flush()` now and
/// then, and says on standard output what it did, so that a checker can tell
/// after a kill -9 which messages must be on disk.
///
/// Standard output, one line per event, each written with one `write` before
/// the next step (a checker reads only lines that end with `\n`):
///
/// - `op <seq> <kind> <channel> <version> <ids> <deleted>`, printed *before*
///   operation `seq` (0, 1, 2, …) starts: `kind` is `save` (an upsert of the
///   messages `ids`), `replace` (they become the channel's whole content),
///   `log` (a change log: `ids` updated, `deleted` removed) or `remove`
///   (`removeAll(in:)`); `ids` and `deleted` are comma-separated, `-` for none.
///   Every message is ``message(channel:id:version:)`` with the line's version.
/// - `flushed <count>`, printed after a `flush()` returned: operations
///   `0..<count` are on disk.
///
/// Channels 0, 1 and 2 get new messages newer than every cached one (which
/// are appended to their files and take them past the limit, into the slack
/// and to compaction), now and then an edit or an older message (which
/// rewrites the file), rarely a replace; they never lose a message any other
/// way, so their newest messages are the same whether or not a file holds
/// older ones in its slack. Channels 3, 4 and 5 use ids 1 up to the limit
/// only (so retention never drops one) and get upserts, change logs with
/// deletions, replaces and removals.
enum FlushChurn {
    static let channelCount = 6
    /// The channels that grow by appends.
    static let appendChannels = 0..<3

    static func url(_ channel: Int) -> String { "flush-channel-\(channel)" }

    /// The only messages `flush-churn` writes.
    static func message(channel: Int, id: Int64, version: Int64) -> ChatMessage {
        ChatMessage(
            messageID: id, channelURL: url(channel), createdAt: 1_000 * id,
            text: "channel \(channel) message \(id) version \(version)")
    }

    /// At most this many operations (then the command exits 0: the checker expects to kill it first).
    static let maxOperations = 50_000

    /// Runs the churn on a task and parks the main thread; exits when done or failed.
    static func start(folder: URL, seed: UInt64, durability: Durability, limit: Int, memoryLimit: Int?) -> Never {
        Task.detached {
            do {
                try await run(folder: folder, seed: seed, durability: durability, limit: limit, memoryLimit: memoryLimit)
                exit(0)
            } catch {
                fail("flush-churn: \(error)", status: 1)
            }
        }
        dispatchMain()
    }

    static func run(folder: URL, seed: UInt64, durability: Durability, limit: Int, memoryLimit: Int?) async throws {
        var configuration = Configuration(maxMessagesPerChannel: limit, durability: durability)
        if let memoryLimit { configuration.memoryLimit = memoryLimit }
        let cache = try ChatCache(directory: folder, configuration: configuration)
        var random = XorShift(seed: seed)
        func next(_ bound: Int) -> Int { random.next(bound) }
        // New messages of this run are newer than every earlier run's (the seed grows by one per run).
        let base = Int64(seed) * 100_000
        var newest = [Int64](repeating: base, count: appendChannels.count)
        for seq in 0..<maxOperations {
            let channel = next(channelCount)
            let version = Int64(seed) * 1_000_000 + Int64(seq)
            var kind = "save"
            var ids = [Int64]()
            var deleted = [Int64]()
            if appendChannels.contains(channel) {
                switch next(40) {
                case 0..<32:  // new newest messages: appended
                    for _ in 0...next(3) {
                        newest[channel] += 2
                        ids.append(newest[channel])
                    }
                case 32..<36:  // edits of recent messages (they may have left or never landed)
                    ids = Set((0...next(2)).map { _ in newest[channel] - 2 * Int64(next(2 * limit)) }).sorted()
                case 36..<39:  // an older message: odd ids were never appended
                    ids = [newest[channel] - 1 - 2 * Int64(next(3 * limit))]
                default:
                    kind = "replace"
                    ids = Set((0..<next(limit + 6)).map { _ in newest[channel] - Int64(next(3 * limit)) }).sorted()
                }
            } else {
                func pool(_ count: Int) -> [Int64] { Set((0..<count).map { _ in Int64(1 + next(limit)) }).sorted() }
                switch next(20) {
                case 0..<8: ids = pool(1 + next(4))
                case 8..<15:
                    kind = "log"
                    ids = pool(next(4))
                    deleted = pool(1 + next(3))
                case 15..<19:
                    kind = "replace"
                    ids = pool(next(limit + 1))
                default: kind = "remove"
                }
            }
            say("op \(seq) \(kind) \(channel) \(version) \(list(ids)) \(list(deleted))")
            let messages = ids.map { message(channel: channel, id: $0, version: version) }
            switch kind {
            case "save": try await cache.messages.save(messages)
            case "replace": try await cache.messages.replace(messages, in: url(channel))
            case "log": try await cache.messages.applyChangeLog(updated: messages, deletedMessageIDs: deleted, in: url(channel))
            default: try await cache.messages.removeAll(in: url(channel))
            }
            if next(3) == 0 {
                try await cache.flush()
                say("flushed \(seq + 1)")
            }
            if next(4) == 0 { try await Task.sleep(for: .milliseconds(1 + next(5))) }
        }
    }

    static func list(_ ids: [Int64]) -> String {
        ids.isEmpty ? "-" : ids.map(String.init).joined(separator: ",")
    }

    /// One line on standard output, in one unbuffered write.
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }
}
