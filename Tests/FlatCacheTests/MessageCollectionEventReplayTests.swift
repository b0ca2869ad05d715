import Foundation
import Testing

@testable import FlatCache
import FlatCacheTesting

/// `MessageCollectionEvent` promises that applying the events in order
/// reproduces the view: paging back and forth included.
@Suite struct MessageCollectionEventReplayTests {
    typealias Event = MessageCollectionEvent<ChatMessage>

    let folder = try! TemporaryFolder()
    let server = SimulatedChatServer()
    let channel = "trip"

    /// The list a view holds after applying `events` in order, as the event's documentation says.
    static func replay(_ events: [Event]) -> [ChatMessage] {
        var view = [ChatMessage]()
        let ordered = { (list: [ChatMessage]) in list.sorted { ($0.createdAt, $0.messageID) < ($1.createdAt, $1.messageID) } }
        for event in events {
            switch event {
            case .cachedPage(let page), .replaced(let page): view = page
            case .added(let added): view = ordered(view + added)
            case .prepended(let page): view = page + view
            case .appended(let page): view += page
            case .updated(let changed):
                let byID = Dictionary(changed.map { ($0.messageID, $0) }, uniquingKeysWith: { _, last in last })
                view = view.map { byID[$0.messageID] ?? $0 }
            case .deleted(let ids): view.removeAll { ids.contains($0.messageID) }
            case .channelDeleted: view = []
            case .channelUpdated, .hugeGap, .failed, .outboxAdded, .outboxChanged, .outboxConfirmed, .outboxCancelled: break
            }
        }
        return view
    }

    @Test func replayingTheEventsOfPagingBackAndForthReproducesTheView() async throws {
        // 40 messages in one millisecond, then one a second: pages that end inside a millisecond
        let cache = try ChatCache<ChatMessage, ChatChannel, ChatUser>(
            directory: folder.url, configuration: Configuration(maxMessagesPerChannel: 1_000, writeDelay: .zero, sizeLimit: nil))
        let messages = (Int64(1)...120).map { id in
            ChatMessage(messageID: id, channelURL: channel, createdAt: id <= 40 ? 5_000 : id * 1_000, text: "message \(id)")
        }
        await server.send(messages)
        let collection = try MessageCollection(
            channelURL: channel, store: cache.messages, source: server, startingPoint: 80_000, pageSize: 7)
        let log = EventLog(collection.events)
        try await collection.start()

        var returnedBack = [ChatMessage]()
        while await collection.hasPrevious { returnedBack = try await collection.loadPrevious() + returnedBack }
        var returnedForward = [ChatMessage]()
        while await collection.hasNext { returnedForward += try await collection.loadNext() }
        await server.send([ChatMessage(messageID: 121, channelURL: channel, createdAt: 121_000, text: "live")])
        for _ in 0..<500 where await collection.messages.last?.messageID != 121 { try await Task.sleep(for: .milliseconds(10)) }

        let view = await collection.messages
        #expect(view.map(\.messageID) == Array(1...121))
        try await log.wait { Self.replay($0).map(\.messageID) == view.map(\.messageID) }
        #expect(Self.replay(log.all) == view)
        // and each page's event holds what the call returned
        let prepended: [ChatMessage] = log.all.flatMap { event -> [ChatMessage] in if case .prepended(let page) = event { page } else { [] } }
        let appended: [ChatMessage] = log.all.flatMap { event -> [ChatMessage] in if case .appended(let page) = event { page } else { [] } }
        #expect(prepended.map(\.messageID).sorted() == returnedBack.map(\.messageID).sorted())
        #expect(appended.map(\.messageID) == returnedForward.map(\.messageID))
        await collection.dispose()
    }

    @Test func aPagedMessageThatFallsAmongThoseShownComesAsAddedNotAppended() async throws {
        // The view opens on 5, 20 and 21, all at 5 000 ms; 15 arrives there later, among them by id.
        let cache = try ChatCache<ChatMessage, ChatChannel, ChatUser>(
            directory: folder.url, configuration: Configuration(writeDelay: .zero, sizeLimit: nil))
        let message = { (id: Int64, time: Int64) in ChatMessage(messageID: id, channelURL: channel, createdAt: time, text: "m\(id)") }
        await server.send((Int64(1)...10).map { message($0, $0 * 1_000) } + [message(20, 5_000), message(21, 5_000)])
        let collection = try MessageCollection(
            channelURL: channel, store: cache.messages, source: server, startingPoint: 5_000, pageSize: 3)
        let log = EventLog(collection.events)
        try await collection.start()
        #expect(await collection.messages.map(\.messageID) == [5, 20, 21])
        await server.send([message(15, 5_000)])

        let returned = try await collection.loadNext()

        #expect(returned.map(\.messageID) == [15, 6, 7])
        let view = await collection.messages
        #expect(view.map(\.messageID) == [5, 15, 20, 21, 6, 7])
        try await log.wait { Self.replay($0).map(\.messageID) == view.map(\.messageID) }
        let last = Array(log.all.suffix(2))
        guard last.count == 2, case .added(let among) = last[0], case .appended(let after) = last[1] else {
            Issue.record("expected .added then .appended, got \(last)")
            return
        }
        #expect(among.map(\.messageID) == [15])
        #expect(after.map(\.messageID) == [6, 7])
        await collection.dispose()
    }
}
