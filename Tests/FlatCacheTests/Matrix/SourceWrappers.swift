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
