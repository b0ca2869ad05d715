import FlatCache
import FlatCacheTesting
import Foundation

typealias LivenessCache = ChatCache<ChatMessage, ChatChannel, ChatUser>

/// What a liveness family runs against: a cache in a folder, a
/// ``SimulatedChatServer`` holding three channels of messages and 40 users,
/// and writer tasks that keep changes flowing the whole time.
final class LivenessWorld: Sendable {
    /// What keeps changing while a round cancels its calls.
    enum Writer: CaseIterable {
        /// Saves into the cache: messages (new ones, and a deletion now and then), channels, users.
        case saves
        /// The server: new messages (live events), channel and profile changes.
        case live
        /// Messages queued in the outbox (delivered when the world delivers).
        case outbox
    }

    static let channelURLs = ["live-0", "live-1", "live-2"]
    static let userIDs = (0..<40).map { "user-\($0)" }

    let cache: LivenessCache
    let server: SimulatedChatServer
    /// Sends the outbox's entries to the server; `nil` when the family runs deliveries itself.
    let delivery: OutboxDelivery<SimulatedChatServer>?
    private let writers: [Task<Void, Never>]

    /// A world in `folder` with `writers` running; `delivering` starts an ``OutboxDelivery`` with short backoffs.
    init(folder: URL, seed: UInt64, writers: [Writer], delivering: Bool) async throws {
        let cache = try LivenessCache(directory: folder, configuration: Configuration(maxMessagesPerChannel: 200))
        let server = SimulatedChatServer()
        await Self.fill(server)
        let delivery =
            delivering
            ? OutboxDelivery(outbox: cache.outbox, sender: server, store: cache.messages, retry: Self.shortBackoff) : nil
        await delivery?.start()
        self.cache = cache
        self.server = server
        self.delivery = delivery
        self.writers = writers.enumerated().map { index, writer in
            Self.write(writer, cache: cache, server: server, seed: seed &+ UInt64(index))
        }
    }

    /// Retries after 1 ms, then at most every 20 ms.
    static let shortBackoff = SendRetryPolicy(initialDelay: .milliseconds(1), maximumDelay: .milliseconds(20))

    /// Each round picks the server's latency: none a third of the time, else up to 3 ms.
    func setLatency(_ random: inout XorShift) async {
        let latency: Duration = random.next(3) == 0 ? .zero : .microseconds(100 + random.next(2_900))
        await server.setLatency(latency)
    }

    /// Stops the writers and the delivery; each must answer.
    func stop(_ stopwatch: LivenessStopwatch) async {
        for writer in writers { writer.cancel() }
        for writer in writers { await stopwatch.answer("writer end") { await writer.value } }
        if let delivery { await stopwatch.answer("OutboxDelivery.stop") { await delivery.stop() } }
        _ = try? await stopwatch.answer("ChatCache.flush") { try await cache.flush() }
    }

    private static func fill(_ server: SimulatedChatServer) async {
        await server.add(users: userIDs.prefix(30).map { ChatUser(userID: $0, nickname: "\($0) 0") })
        await server.update(
            channels: channelURLs.map { ChatChannel(channelURL: $0, kind: .group, name: $0, memberCount: 3, createdAt: 1_000) })
        for (index, channelURL) in channelURLs.enumerated() {
            await server.send(
                (1...60).map { id in
                    let messageID = Int64(index * 100 + id)
                    return ChatMessage(messageID: messageID, channelURL: channelURL, createdAt: 1_000 * messageID, text: "m\(messageID)")
                })
        }
    }

    /// A writer: one change, a pause of 1–4 ms, again, until cancelled.
    private static func write(_ writer: Writer, cache: LivenessCache, server: SimulatedChatServer, seed: UInt64) -> Task<Void, Never> {
        Task.detached {
            var random = XorShift(seed: seed)
            var count: Int64 = 0
            while !Task.isCancelled {
                count += 1
                let channelURL = channelURLs[random.next(channelURLs.count)]
                // Newer than anything filled, in ranges of their own per writer.
                let id = 1_000_000 * Int64(1 + seed % 100) + count
                let message = ChatMessage(messageID: id, channelURL: channelURL, createdAt: 100_000 + 10 * count, text: "w\(id)")
                switch writer {
                case .saves:
                    _ = try? await cache.messages.save([message])
                    if count % 7 == 0 {
                        _ = try? await cache.messages.applyChangeLog(updated: [], deletedMessageIDs: [id - 3], in: channelURL)
                    }
                    if count % 5 == 0 {
                        _ = try? await cache.channels.save([
                            ChatChannel(channelURL: channelURL, kind: .group, name: "c\(count)", memberCount: 3, createdAt: 1_000)
                        ])
                    }
                    if count % 5 == 2 {
                        _ = try? await cache.users.save([ChatUser(userID: userIDs[random.next(30)], nickname: "saved \(count)")])
                    }
                case .live:
                    await server.send([message])
                    if count % 5 == 0 {
                        await server.update(channels: [
                            ChatChannel(channelURL: channelURL, kind: .group, name: "s\(count)", memberCount: 3, createdAt: 1_000)
                        ])
                    }
                    if count % 5 == 2 {
                        await server.add(users: [ChatUser(userID: userIDs[random.next(30)], nickname: "changed \(count)")])
                    }
                case .outbox:
                    _ = try? await cache.outbox.send(message, requestID: "writer-\(seed)-\(count)")
                }
                try? await Task.sleep(for: .microseconds(1_000 + random.next(3_000)))
            }
        }
    }
}

/// The calls of one storm: each started at once, and cancelled at a random moment.
struct LivenessStorm {
    private(set) var calls = [(name: String, delay: Duration, body: @Sendable () async throws -> Void)]()

    /// Adds a call named `name` (what the report says when it hangs), cancelled at a random moment.
    mutating func add(_ name: String, _ random: inout XorShift, _ body: @escaping @Sendable () async throws -> Void) {
        calls.append((name, Liveness.moment(&random), body))
    }

    /// Adds `count` loops over streams `stream` makes, each cancelled at a random moment.
    mutating func listen<S: AsyncSequence & Sendable>(
        _ name: String, count: Int, _ random: inout XorShift, _ stream: @escaping @Sendable () -> S
    ) {
        for _ in 0..<count {
            add(name, &random) { for try await _ in stream() {} }
        }
    }

    /// Adds a task that starts a loop over a stream `stream` makes, cancels
    /// it within 3 ms, and again, `times` times: a view that comes and goes
    /// while events flow (each loop is timed like any cancelled call).
    mutating func churn<S: AsyncSequence & Sendable>(
        _ name: String, times: Int, _ random: inout XorShift, _ stream: @escaping @Sendable () -> S
    ) {
        again(name, times: times, &random) { for try await _ in stream() {} }
    }

    /// Adds a task that starts `body`, cancels it within 3 ms, and again, `times` times.
    mutating func again(_ name: String, times: Int, _ random: inout XorShift, _ body: @escaping @Sendable () async throws -> Void) {
        churns.append((name, (0..<times).map { _ in .microseconds(random.next(3_000)) }, body))
    }

    private var churns = [(name: String, delays: [Duration], body: @Sendable () async throws -> Void)]()

    /// Runs every call and churn at once (several tasks, on every core), and returns when each ended.
    func run(_ stopwatch: LivenessStopwatch) async {
        await withTaskGroup(of: Void.self) { group in
            for call in calls {
                group.addTask { await stopwatch.cancel(call.name, after: call.delay, call.body) }
            }
            for churn in churns {
                group.addTask {
                    for delay in churn.delays { await stopwatch.cancel(churn.name, after: delay, churn.body) }
                }
            }
        }
    }
}
