import FlatCache
import FlatCacheTesting
import Foundation
import Testing

/// The simulated server behaves like a real one: pages, change logs by
/// token (paged, and too old past its retention), live events while online.
@Suite struct SimulatedChatServerTests {
    let server = SimulatedChatServer()
    static let channel = "trip"

    static func message(_ id: Int64, _ text: String? = nil) -> ChatMessage {
        ChatMessage(messageID: id, channelURL: channel, createdAt: id * 1_000, text: text ?? "message \(id)")
    }

    @Test func pagesBeforeAndAfterATimeSayWhetherMoreExist() async throws {
        await server.send((1...10).map { Self.message($0) })
        let before = try await server.messages(in: Self.channel, .before, 6_000, limit: 3)
        #expect(before.messages.map(\.messageID) == [3, 4, 5] && before.hasMore)
        let oldest = try await server.messages(in: Self.channel, .before, 3_000, limit: 3)
        #expect(oldest.messages.map(\.messageID) == [1, 2] && !oldest.hasMore)
        let after = try await server.messages(in: Self.channel, .after, 6_000, limit: 3)
        #expect(after.messages.map(\.messageID) == [7, 8, 9] && after.hasMore)
        let newest = try await server.messages(in: Self.channel, .after, 8_000, limit: 3)
        #expect(newest.messages.map(\.messageID) == [9, 10] && !newest.hasMore)
    }

    @Test func changeLogsListEditsAndDeletesSinceATokenAPageAtATime() async throws {
        await server.send((1...5).map { Self.message($0) })
        let token = try await server.changeLogToken(in: Self.channel)
        await server.setChangeLogLimits(retention: 100, pageSize: 2)
        #expect(await server.edit(messageID: 2, in: Self.channel, text: "edited", updatedAt: 9_000))
        #expect(await server.delete(messageID: 3, in: Self.channel))
        await server.send([Self.message(6)])
        await server.send([ChatMessage(messageID: 9, channelURL: "elsewhere", createdAt: 1, text: "not this channel")])

        guard case .changes(let updated, let deleted, let next, let hasMore) = try await server.changeLog(in: Self.channel, since: token)
        else { Issue.record("expected changes"); return }
        #expect(updated.map(\.text) == ["edited"] && deleted == [3] && hasMore)
        guard case .changes(let more, let gone, let last, let moreToCome) = try await server.changeLog(in: Self.channel, since: next)
        else { Issue.record("expected changes"); return }
        #expect(more.map(\.messageID) == [6] && gone.isEmpty && !moreToCome)
        guard case .changes(let none, let noneGone, _, false) = try await server.changeLog(in: Self.channel, since: last)
        else { Issue.record("expected an empty change log"); return }
        #expect(none.isEmpty && noneGone.isEmpty)
    }

    @Test func aTokenPastTheRetentionIsTooOldAndAStrangeOneIsAnError() async throws {
        await server.setChangeLogLimits(retention: 3, pageSize: 100)
        await server.send([Self.message(1)])
        let token = try await server.changeLogToken(in: Self.channel)
        await server.send((2...4).map { Self.message($0) })
        guard case .changes(let updated, _, _, _) = try await server.changeLog(in: Self.channel, since: token)
        else { Issue.record("three changes are kept"); return }
        #expect(updated.map(\.messageID) == [2, 3, 4])
        await server.send([Self.message(5)])
        guard case .tokenTooOld = try await server.changeLog(in: Self.channel, since: token)
        else { Issue.record("a fourth change forgets the token's"); return }
        await #expect(throws: SimulatedChatServer.Failure.badToken("999")) {
            _ = try await server.changeLog(in: Self.channel, since: "999")
        }
    }

    @Test func liveEventsArriveWhileOnlineOnly() async throws {
        let events = await server.liveEvents()
        var iterator = events.makeAsyncIterator()
        await server.send([Self.message(1)])
        await server.setOffline(true)
        await server.send([Self.message(2)])  // missed: not connected
        await server.setOffline(false)
        await server.edit(messageID: 1, in: Self.channel, text: "edited", updatedAt: 5)
        await server.delete(messageID: 2, in: Self.channel)
        await server.deleteChannel(Self.channel)
        var seen = [String]()
        for _ in 0..<4 {
            switch await iterator.next() {
            case .messageAdded(let message)?: seen.append("added \(message.messageID)")
            case .messageUpdated(let message)?: seen.append("updated \(message.messageID): \(message.text)")
            case .messageDeleted(let id, _)?: seen.append("deleted \(id)")
            case .channelDeleted(let url)?: seen.append("channel deleted \(url)")
            case .channelUpdated(let url)?: seen.append("channel updated \(url)")
            case nil: seen.append("end")
            }
        }
        #expect(seen == ["added 1", "updated 1: edited", "deleted 2", "channel deleted trip"])
        #expect(await server.messages(in: Self.channel).isEmpty)
    }

    @Test func offlineAndScriptedFailuresReachEveryCall() async throws {
        await server.setOffline(true)
        await #expect(throws: SimulatedChatServer.Failure.offline) {
            _ = try await server.messages(in: Self.channel, .before, 1, limit: 1)
        }
        await server.setOffline(false)
        await server.failNextCalls(2)
        await #expect(throws: SimulatedChatServer.Failure.self) { _ = try await server.changeLogToken(in: Self.channel) }
        await #expect(throws: SimulatedChatServer.Failure.self) { _ = try await server.users(withIDs: ["a"]) }
        #expect(try await server.changeLogToken(in: Self.channel) == "0")
        #expect(await server.calls.count == 4)
    }

    // MARK: - The channel list

    static func channel(_ url: String, lastAt: Int64) -> ChatChannel {
        ChatChannel(
            channelURL: url, kind: .group, name: url, memberCount: 2, createdAt: 0,
            lastMessage: ChatMessage(messageID: lastAt, channelURL: url, createdAt: lastAt, text: "last"))
    }

    @Test func channelPagesComeNewestFirstByCursor() async throws {
        await server.update(channels: (1...5).map { Self.channel("c\($0)", lastAt: Int64($0) * 1_000) })
        let first = try await server.channels(from: nil, limit: 2)
        #expect(first.channels.map(\.channelURL) == ["c5", "c4"] && first.next != nil)
        let second = try await server.channels(from: first.next, limit: 2)
        #expect(second.channels.map(\.channelURL) == ["c3", "c2"])
        let last = try await server.channels(from: second.next, limit: 2)
        #expect(last.channels.map(\.channelURL) == ["c1"] && last.next == nil)
    }

    @Test func theChannelListsChangeLogFollowsUpdatesMessagesAndLeaving() async throws {
        await server.update(channels: [Self.channel("a", lastAt: 1_000), Self.channel("b", lastAt: 2_000)])
        let token = try await server.channelChangeLogToken()
        let events = await server.channelEvents()
        var iterator = events.makeAsyncIterator()
        // A message to "a" moves it up; "b" is left; "c" is joined.
        await server.send([ChatMessage(messageID: 9_000, channelURL: "a", createdAt: 9_000, text: "news")])
        await server.leave(channelURL: "b")
        await server.update(channels: [Self.channel("c", lastAt: 3_000)])
        guard case .changes(let updated, let removed, _, false) = try await server.channelChangeLog(since: token)
        else { Issue.record("expected the list's changes"); return }
        #expect(updated.map(\.channelURL) == ["a", "c"])
        #expect(updated.first?.lastMessageAt == 9_000)
        #expect(removed == ["b"])
        #expect(await server.channelList().map(\.channelURL) == ["a", "c"])
        var seen = [String]()
        for _ in 0..<3 {
            switch await iterator.next() {
            case .updated(let channel)?: seen.append("updated \(channel.channelURL)")
            case .removed(let url)?: seen.append("removed \(url)")
            case nil: seen.append("end")
            }
        }
        #expect(seen == ["updated a", "removed b", "updated c"])
        // Past the retention, the token is too old.
        await server.setChangeLogLimits(retention: 1, pageSize: 10)
        guard case .tokenTooOld = try await server.channelChangeLog(since: token)
        else { Issue.record("expected tokenTooOld"); return }
    }
}
