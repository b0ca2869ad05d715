import FlatCache

/// What Ana types in the outbox story, each with the request id (idempotency
/// key) it is sent with, all into General at fixed times, so that every run
/// tells the same story.
enum OutboxSeed {
    /// Ana, who types.
    static let ana = StorySeed.users[0]

    /// Message `number` Ana types, `number` minutes after the story's start, not sent yet (id 0).
    static func typed(_ number: Int, _ text: String) -> (requestID: String, message: ChatMessage) {
        ("ana-\(number)", ChatMessage(
            messageID: 0, channelURL: StorySeed.general, createdAt: StorySeed.start + Int64(number) * 60_000,
            sender: ana, text: text))
    }

    /// The three typed offline, in the app that is then killed.
    static let typedOffline = [
        typed(1, "Landed, on the train now"),
        typed(2, "No signal in the tunnel"),
        typed(3, "Who has the map?"),
    ]

    /// Typed online; the server accepts it, and its answer is lost.
    static let answerLost = typed(4, "See you at 8 at the station")
    /// Refused for good: it holds a link.
    static let refused = typed(5, "Tickets: http://tickets.example/cheap")
    /// Typed after the refused one: sent all the same.
    static let afterRefused = typed(6, "Running 10 minutes late")
    /// The refused one's text, edited, for `retry(_:with:)`.
    static let editedText = "Tickets are at the front desk"
    /// Refused for good too, then cancelled.
    static let cancelled = typed(7, "Cheaper ones: http://deals.example")
    /// Why the server refuses a message.
    static let refusal = "links are not allowed in General"
}
