import FlatCache
import FlatCacheMatrix
import Foundation

/// A Matrix account as if offline between calls: every call goes to the
/// server, but no live event ever comes (a change log must find them).
struct WithoutLiveEvents: MessageSource, ChannelSource {
    let source: MatrixSource

    init(_ source: MatrixSource) { self.source = source }

    func messages(in channelURL: String, _ direction: PageDirection, _ timestamp: Int64, limit: Int) async throws
        -> MessagePage<MatrixMessage>
    {
        try await source.messages(in: channelURL, direction, timestamp, limit: limit)
    }

    func changeLogToken(in channelURL: String) async throws -> String { try await source.changeLogToken(in: channelURL) }

    func changeLog(in channelURL: String, since token: String) async throws -> MessageChangeLog<MatrixMessage> {
        try await source.changeLog(in: channelURL, since: token)
    }

    func liveEvents() async -> AsyncStream<LiveEvent<MatrixMessage>> { AsyncStream { $0.finish() } }

    func channels(from cursor: String?, limit: Int) async throws -> ChannelPage<MatrixRoom> {
        try await source.channels(from: cursor, limit: limit)
    }

    func channelChangeLogToken() async throws -> String { try await source.channelChangeLogToken() }

    func channelChangeLog(since token: String) async throws -> ChannelChangeLog<MatrixRoom> {
        try await source.channelChangeLog(since: token)
    }

    func channelEvents() async -> AsyncStream<ChannelEvent<MatrixRoom>> { AsyncStream { $0.finish() } }
}

/// A Matrix account whose server stops (`Scripts/synapse stop`) after
/// `afterPages` pages of newer messages: a sync that fails half-way.
final class StopsServer: MessageSource, @unchecked Sendable {
    private let source: MatrixSource
    private let afterPages: Int
    private let lock = NSLock()
    private var pages = 0

    init(_ source: MatrixSource, afterPages: Int) {
        self.source = source
        self.afterPages = afterPages
    }

    func messages(in channelURL: String, _ direction: PageDirection, _ timestamp: Int64, limit: Int) async throws
        -> MessagePage<MatrixMessage>
    {
        if direction == .after {
            let count = lock.withLock { pages += 1; return pages }
            if count > afterPages { try Synapse.script("stop") }
        }
        return try await source.messages(in: channelURL, direction, timestamp, limit: limit)
    }

    func changeLogToken(in channelURL: String) async throws -> String { try await source.changeLogToken(in: channelURL) }

    func changeLog(in channelURL: String, since token: String) async throws -> MessageChangeLog<MatrixMessage> {
        try await source.changeLog(in: channelURL, since: token)
    }

    func liveEvents() async -> AsyncStream<LiveEvent<MatrixMessage>> { AsyncStream { $0.finish() } }
}

/// A Matrix account whose first `count` sends reach the server, but whose
/// answers are lost on the way back: the send throws `SendFailure.offline`.
final class LosesAnswers: MessageSender, @unchecked Sendable {
    private let source: MatrixSource
    private let lock = NSLock()
    private var toLose: Int
    private var sends = 0

    init(_ source: MatrixSource, count: Int) {
        self.source = source
        toLose = count
    }

    /// How many sends were made.
    var calls: Int { lock.withLock { sends } }

    func send(_ message: MatrixMessage, requestID: String) async throws -> MatrixMessage {
        let copy = try await source.send(message, requestID: requestID)
        let lose = lock.withLock {
            sends += 1
            defer { toLose -= 1 }
            return toLose > 0
        }
        if lose { throw SendFailure.offline("the answer was lost (LosesAnswers)") }
        return copy
    }
}

/// Whether `delivery` sent everything within `limit` (the wait is cancelled at the limit).
func deliveredAll<Sender: MessageSender>(by delivery: OutboxDelivery<Sender>, within limit: Duration) async -> Bool {
    await withTaskGroup(of: Bool.self) { group in
        group.addTask { (try? await delivery.waitUntilSent()) != nil }
        group.addTask {
            try? await Task.sleep(for: limit)
            return false
        }
        let first = await group.next() ?? false
        group.cancelAll()
        return first
    }
}
