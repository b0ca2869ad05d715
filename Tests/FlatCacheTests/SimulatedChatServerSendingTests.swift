import FlatCache
import FlatCacheTesting
import Foundation
import Testing

/// The simulated server as a ``MessageSender``, through the public API an
/// app's own tests have (no `@testable`): each request id makes one
/// message, and the scripted failures come in the order a test asks for.
@Suite struct SimulatedChatServerSendingTests {
    let server = SimulatedChatServer()
    static let channel = "trip"

    static func draft(_ text: String, at createdAt: Int64 = 0) -> ChatMessage {
        ChatMessage(messageID: 0, channelURL: channel, createdAt: createdAt, text: text)
    }

    @Test func aSendMakesTheNextIdAtTheServersTimeOncePerRequestID() async throws {
        await server.send([ChatMessage(messageID: 41, channelURL: Self.channel, createdAt: 1_000, text: "before")])
        await server.setClock(CacheClock { Date(timeIntervalSince1970: 5) })

        let made = try await server.send(Self.draft("hi"), requestID: "r1")
        let again = try await server.send(Self.draft("hi"), requestID: "r1")

        #expect(made.messageID == 42 && made.createdAt == 5_000 && made.requestID == "r1")
        #expect(again == made)
        #expect(await server.count(of: "r1", in: Self.channel) == 1)
        #expect(await server.messages(in: Self.channel).map(\.messageID) == [41, 42])
    }

    @Test func aMadeMessageIsNeverOlderThanTheChannelsNewest() async throws {
        await server.send([ChatMessage(messageID: 1, channelURL: Self.channel, createdAt: 9_000, text: "newest")])
        await server.setClock(CacheClock { Date(timeIntervalSince1970: 2) })   // behind the channel

        let made = try await server.send(Self.draft("late"), requestID: "r")

        #expect(made.createdAt == 9_000)
        #expect(await server.messages(in: Self.channel).last == made)
    }

    @Test func aDroppedAnswerStillMakesTheMessageAndTheRetryReturnsIt() async throws {
        await server.dropNextAnswers(1)

        await #expect(throws: SendFailure.self) { _ = try await server.send(Self.draft("hi"), requestID: "r") }
        #expect(await server.count(of: "r", in: Self.channel) == 1)

        let retried = try await server.send(Self.draft("hi"), requestID: "r")
        #expect(retried.requestID == "r")
        #expect(await server.count(of: "r", in: Self.channel) == 1)
    }

    @Test func refusalsAndRateLimitsComeAsScriptedThenSendsGoThrough() async throws {
        await server.refuseNextSends(1, reason: "too long")
        await server.rateLimitNextSends(1, retryAfter: .seconds(3))

        await #expect(throws: SendFailure.refused("too long")) { _ = try await server.send(Self.draft("a"), requestID: "a") }
        await #expect(throws: SendFailure.rateLimited(retryAfter: .seconds(3))) {
            _ = try await server.send(Self.draft("b"), requestID: "b")
        }
        _ = try await server.send(Self.draft("c"), requestID: "c")

        #expect(await server.messages(in: Self.channel).map(\.text) == ["c"])
    }

    @Test func offlineAndScriptedFailuresAreSendFailuresAndMakeNothing() async throws {
        await server.setOffline(true)
        await #expect(throws: SendFailure.offline(SimulatedChatServer.Failure.offline.description)) {
            _ = try await server.send(Self.draft("a"), requestID: "a")
        }
        await server.setOffline(false)
        await server.failNextCalls(1)
        await #expect(throws: SendFailure.self) { _ = try await server.send(Self.draft("b"), requestID: "b") }

        #expect(await server.messages(in: Self.channel).isEmpty)
        #expect(await server.calls == [
            .send(channelURL: Self.channel, requestID: "a"), .send(channelURL: Self.channel, requestID: "b"),
        ])
    }

    @Test func aSentMessageIsALiveEventAndMovesItsChannelUpTheList() async throws {
        let older = ChatChannel(channelURL: "older", kind: .group, name: "Older", memberCount: 2, createdAt: 0)
        let trip = ChatChannel(channelURL: Self.channel, kind: .group, name: "Trip", memberCount: 2, createdAt: 0)
        await server.update(channels: [older, trip])
        await server.send([ChatMessage(messageID: 1, channelURL: "older", createdAt: 1_000, text: "old news")])
        let events = await server.liveEvents()
        var iterator = events.makeAsyncIterator()

        let made = try await server.send(Self.draft("fresh", at: 2_000), requestID: "r")

        guard case .messageAdded(let heard)? = await iterator.next() else { Issue.record("expected the sent message"); return }
        #expect(heard == made)
        #expect(await server.channelList().map(\.channelURL) == [Self.channel, "older"])
    }

    @Test func itKeepsMessagesInTheCachesCanonicalOrder() async throws {
        // Out of order, and two sharing a millisecond: time first, then id.
        let messages = [(3, 2_000), (2, 1_000), (1, 2_000)].map {
            ChatMessage(messageID: Int64($0.0), channelURL: Self.channel, createdAt: Int64($0.1), text: "m")
        }
        await server.send(messages)

        let held = await server.messages(in: Self.channel)
        #expect(held.map(\.messageID) == [2, 1, 3])
        #expect(zip(held, held.dropFirst()).allSatisfy { CanonicalOrder.precedes($0, $1) })
    }
}
