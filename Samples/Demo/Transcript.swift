/// The events of the story's collections and directory as they arrive,
/// printed when the story asks for them: each step waits for the events it
/// expects (5 seconds at most), so every step's lines come before the next's.
///
/// ```swift
/// transcript.follow(collection.events, from: .messages, describe: StoryLines.describe)
/// try await collection.start()
/// try await transcript.expect(.messages, "cachedPage", "replaced")   // prints their lines
/// ```
actor Transcript {
    /// Who sent an event.
    enum Source: String, Sendable {
        /// A ``ChannelListCollection``.
        case list = "the channel list"
        /// A ``MessageCollection``.
        case messages = "the message collection"
        /// A ``UserDirectory``.
        case users = "the user directory"
        /// An ``Outbox``.
        case outbox = "the outbox"
    }

    /// One event: who sent it, its case's name, and its line.
    struct Entry: Sendable {
        /// Who sent it.
        let source: Source
        /// The event's case, such as `added`.
        let name: String
        /// What the line says after `event`.
        let text: String
        /// Such as `added from the message collection`.
        var label: String { "\(name) from \(source.rawValue)" }
    }

    /// How long a step waits for an event before the story fails.
    static let patience = Duration.seconds(5)

    /// Every event so far, in the order they arrived.
    private(set) var entries = [Entry]()
    /// How many of ``entries`` were printed.
    private var printed = 0
    /// The step waiting for an event, if any.
    private var waiting: CheckedContinuation<Void, Never>?

    /// Records each event of `stream` as it comes, described by `describe`, until the stream finishes.
    nonisolated func follow<Event: Sendable>(
        _ stream: AsyncStream<Event>, from source: Source, describe: @escaping @Sendable (Event) -> (name: String, text: String)
    ) {
        Task {
            for await event in stream {
                let (name, text) = describe(event)
                await record(Entry(source: source, name: name, text: text))
            }
        }
    }

    /// Waits for the next events, checks they are `names` from `source` in
    /// that order, and prints them.
    ///
    /// - Parameters:
    ///   - source: Who must send them.
    ///   - names: Their cases, in order.
    ///   - inAnyOrder: Whether they may come in another order (work done in
    ///     parallel); they are printed in the order of `names` then.
    /// - Throws: ``StoryError/missingEvents(_:from:arrived:)`` when they do not
    ///   come within ``patience``, ``StoryError/unexpectedEvents(_:expected:)`` when others come.
    func expect(_ source: Source, _ names: String..., inAnyOrder: Bool = false) async throws(StoryError) {
        let deadline = ContinuousClock.now.advanced(by: Self.patience)
        while entries.count - printed < names.count, ContinuousClock.now < deadline {
            await nextArrival(before: deadline)
        }
        var arrived = Array(entries[printed...].prefix(names.count))
        printed += arrived.count
        guard arrived.count == names.count else {
            throw .missingEvents(names, from: source, arrived: arrived.map(\.name))
        }
        if inAnyOrder { arrived.sort { (names.firstIndex(of: $0.name) ?? 0) < (names.firstIndex(of: $1.name) ?? 0) } }
        guard arrived.allSatisfy({ $0.source == source }), arrived.map(\.name) == names else {
            throw .unexpectedEvents(arrived.map(\.label), expected: names.map { "\($0) from \(source.rawValue)" })
        }
        for entry in arrived { StoryLines.say("event", entry.text) }
    }

    /// Fails when events came that no step expected.
    ///
    /// - Throws: ``StoryError/unexpectedEvents(_:expected:)``.
    func expectNoMore() throws(StoryError) {
        guard printed == entries.count else {
            throw .unexpectedEvents(entries[printed...].map(\.label), expected: [])
        }
    }

    /// Adds an event, and wakes the step waiting for one.
    private func record(_ entry: Entry) {
        entries.append(entry)
        wake()
    }

    /// Returns when an event arrives or at `deadline`, whichever comes first.
    private func nextArrival(before deadline: ContinuousClock.Instant) async {
        let timer = Task { [weak self] in
            do { try await Task.sleep(until: deadline, clock: .continuous) } catch { return }  // cancelled: an event came
            await self?.wake()
        }
        // Set on the actor before any `record` can run: no arrival is missed.
        await withCheckedContinuation { waiting = $0 }
        timer.cancel()
    }

    /// Lets the waiting step look again.
    private func wake() {
        waiting?.resume()
        waiting = nil
    }
}

/// Why the story stopped: a step did not see what it should have.
enum StoryError: Error, CustomStringConvertible {
    /// Fewer events than expected came within ``Transcript/patience``.
    case missingEvents([String], from: Transcript.Source, arrived: [String])
    /// Events came that the step did not expect (none, when `expected` is empty), or in another order.
    case unexpectedEvents([String], expected: [String])
    /// A call that must fail (the server is offline) succeeded.
    case didNotFail(String)
    /// What a step claims did not hold (such as a message on the server twice).
    case notHeld(String)

    /// A sentence that says what went wrong.
    var description: String {
        switch self {
        case .missingEvents(let names, let source, let arrived):
            "Expected \(names.joined(separator: ", ")) from \(source.rawValue) within 5 s; "
                + (arrived.isEmpty ? "none came." : "only \(arrived.joined(separator: ", ")) came.")
        case .unexpectedEvents(let events, let expected):
            "Expected \(expected.isEmpty ? "no more events" : expected.joined(separator: ", ")); "
                + "got \(events.joined(separator: ", "))."
        case .didNotFail(let call):
            "\(call) should have failed with the server offline, but it succeeded."
        case .notHeld(let what):
            "A step did not hold: \(what)."
        }
    }
}
