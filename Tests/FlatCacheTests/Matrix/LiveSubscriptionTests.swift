import FlatCache
import FlatCacheMatrix
import Foundation
import Testing

/// One live `/sync` loop per ``MatrixSource`` (issue 31), against
/// ``StubHomeserver``: many listeners, one long poll; a listener that goes
/// leaves the others going; the last one stops the polling.
@Suite(.timeLimit(.minutes(2))) struct LiveSubscriptionTests {
    static let token = StubHomeserver.Response(200, #"{"next_batch":"s1"}"#)

    /// A long poll's answer: `room` left (an event for both kinds of listener), then `next`.
    static func left(_ room: String, next: String, gate: StubHomeserver.Gate? = nil) -> StubHomeserver.Response {
        StubHomeserver.Response(200, #"{"next_batch":"\#(next)","rooms":{"leave":{"\#(room)":{}}}}"#, gate: gate)
    }

    private func source(for stub: StubHomeserver) throws -> MatrixSource {
        var client = try MatrixClient(homeserver: stub.url, accessToken: "token")
        // Generous: under ThreadSanitizer beside the liveness campaign a request to the stub took
        // over 5 s, and a request past its deadline is tried again after the stub has used up its answer.
        client.requestTimeout = 60
        return MatrixSource(client: client)
    }

    /// The long polls the stub read (a `since` in the query), in order.
    private func polls(_ stub: StubHomeserver) -> [String] {
        stub.requests.filter { $0.contains("/sync?") && $0.contains("since=") }
    }

    @Test func threeListenersShareOneLongPollAndEachGetsEveryEvent() async throws {
        let gate = StubHomeserver.Gate()
        let stub = try StubHomeserver([Self.token, Self.left("!a:x", next: "s2", gate: gate), Self.left("!b:x", next: "s3")])
        defer { stub.stop() }
        let source = try source(for: stub)

        // Given two room listeners and the channel list's, on copies of one source.
        let copy = source
        let first = Listened(await source.liveEvents()) { Self.room(of: $0) }
        let second = Listened(await copy.liveEvents()) { Self.room(of: $0) }
        let list = Listened(await source.channelEvents()) { Self.room(of: $0) }
        defer { for listener in [first.task, second.task, list.task] { listener.cancel() } }

        // When the server answers the held long poll, then the next.
        gate.open()

        // Then each listener gets both answers' events, and the server saw one token request and one poll per answer.
        for listener in [first.collected, second.collected, list.collected] {
            #expect(await listener.wait(for: 2, upTo: .seconds(30)) == ["!a:x", "!b:x"])
        }
        #expect(stub.requests.filter { $0.contains("/sync?") && !$0.contains("since=") }.count == 1, "\(stub.requests)")
        #expect(polls(stub).prefix(2).map { $0.contains("since=s1") } == [true, false], "\(stub.requests)")
        #expect(polls(stub).filter { $0.contains("since=s1") }.count == 1, "\(stub.requests)")
        #expect(polls(stub).filter { $0.contains("since=s2") }.count == 1, "\(stub.requests)")
    }

    @Test func aListenerThatGoesLeavesTheOthersAndTheLastOneStopsThePolling() async throws {
        let firstAnswer = StubHomeserver.Gate()
        // Held until the test opens it: with the default 5 s, a leaving listener whose task took that
        // long to end (the whole suite at once on 2 cores) got the second answer too, and the test
        // read the stub's time-out as a listener that did not leave (CI trial, issue 32's sixth session).
        let secondAnswer = StubHomeserver.Gate(longest: 60)
        // After the two held answers, answers at once: a loop left running would poll on and on.
        let empty = StubHomeserver.Response(200, #"{"next_batch":"s3"}"#)
        let stub = try StubHomeserver(
            [Self.token, Self.left("!a:x", next: "s2", gate: firstAnswer), Self.left("!b:x", next: "s3", gate: secondAnswer)]
                + Array(repeating: empty, count: 300))
        defer { stub.stop() }
        let source = try source(for: stub)
        let leaving = Listened(await source.liveEvents()) { Self.room(of: $0) }
        let staying = Listened(await source.liveEvents()) { Self.room(of: $0) }
        defer { staying.task.cancel() }
        firstAnswer.open()
        #expect(await leaving.collected.wait(for: 1, upTo: .seconds(30)) == ["!a:x"])
        #expect(await staying.collected.wait(for: 1, upTo: .seconds(30)) == ["!a:x"])

        // When one listener's task is cancelled, the other still gets the next answer.
        leaving.task.cancel()
        await leaving.task.value
        secondAnswer.open()
        #expect(await staying.collected.wait(for: 2, upTo: .seconds(30)) == ["!a:x", "!b:x"])
        #expect(await leaving.collected.events == ["!a:x"])

        // When the last one goes, the polling stops: no request comes after it settles.
        staying.task.cancel()
        await staying.task.value
        try await Task.sleep(for: .milliseconds(500))
        let settled = stub.requests.count
        try await Task.sleep(for: .seconds(1))
        #expect(stub.requests.count == settled, "polls went on after the last listener: \(stub.requests.count - settled) more")
        #expect(settled < 300, "the loop polled \(settled) times")
    }

    @Test func aRefusedTokenEndsEveryListenersStream() async throws {
        let gate = StubHomeserver.Gate()
        let refused = StubHomeserver.Response(401, #"{"errcode":"M_UNKNOWN_TOKEN","error":"gone"}"#, gate: gate)
        let stub = try StubHomeserver([Self.token, refused])
        defer { stub.stop() }
        let source = try source(for: stub)
        let messages = Listened(await source.liveEvents()) { Self.room(of: $0) }
        let list = Listened(await source.channelEvents()) { Self.room(of: $0) }
        gate.open()
        for listener in [messages.collected, list.collected] {
            #expect(await listener.waitForEnd(upTo: .seconds(30)), "a listener's stream did not end")
        }
    }

    static func room(of event: LiveEvent<MatrixMessage>) -> String {
        if case .channelDeleted(let room) = event { room } else { "\(event)" }
    }

    static func room(of event: ChannelEvent<MatrixRoom>) -> String {
        if case .removed(let room) = event { room } else { "\(event)" }
    }
}

/// A stream read by a task of its own into ``Collected``.
struct Listened<Event: Sendable> {
    let collected = Collected()
    let task: Task<Void, Never>

    init(_ stream: AsyncStream<Event>, _ describe: @escaping @Sendable (Event) -> String) {
        task = Task { [collected] in
            for await event in stream { await collected.append(describe(event)) }
            await collected.end()
        }
    }
}

/// What a listener read, as text.
actor Collected {
    private(set) var events = [String]()

    private(set) var ended = false

    func append(_ event: String) { events.append(event) }

    func end() { ended = true }

    /// Whether the stream ended within `bound`.
    func waitForEnd(upTo bound: Duration) async -> Bool {
        let deadline = ContinuousClock.now + bound
        while !ended, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        return ended
    }

    /// The first `count` events, once there are that many, or what there is after `bound`.
    func wait(for count: Int, upTo bound: Duration) async -> [String] {
        let deadline = ContinuousClock.now + bound
        while events.count < count, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        return Array(events.prefix(count))
    }
}
