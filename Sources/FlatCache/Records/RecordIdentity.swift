public import Foundation

// Identity and dates for views: SwiftUI's `List` and `ForEach` take
// `Identifiable` elements, and a view formats `Date`s, not milliseconds.

extension ChatMessage {
    /// The message's identity for views (`List(messages) { … }`): its
    /// ``messageID``, unique within its channel.
    public var id: Int64 { messageID }
    /// ``updatedAt`` as a `Date`; `nil` when the message was never edited (``updatedAt`` is 0).
    public var updateDate: Date? { updatedAt == 0 ? nil : Date(millisecondsSince1970: updatedAt) }
}

extension ChatChannel {
    /// The channel's identity for views: its ``channelURL``.
    public var id: String { channelURL }
    /// ``createdAt`` as a `Date`.
    public var creationDate: Date { Date(millisecondsSince1970: createdAt) }
}

extension ChatUser {
    /// The user's identity for views: their ``userID``.
    public var id: String { userID }
}

extension MessageRecord {
    /// ``createdAt`` as a `Date`, for formatting (`Text(message.creationDate, style: .time)`).
    public var creationDate: Date { Date(millisecondsSince1970: createdAt) }
}

extension ChannelRecord {
    /// ``lastMessageAt`` as a `Date`.
    public var lastMessageDate: Date { Date(millisecondsSince1970: lastMessageAt) }
}

// Internal on purpose: a public extension of Foundation's `Date` could clash
// with the app's own of the same name.
extension Date {
    /// The moment `milliseconds` after 00:00:00 UTC on 1 January 1970, the unit of every FlatCache timestamp.
    init(millisecondsSince1970 milliseconds: Int64) {
        self.init(timeIntervalSince1970: Double(milliseconds) / 1_000)
    }

    /// The moment as whole milliseconds since 1970, rounded down.
    var millisecondsSince1970: Int64 {
        Int64((timeIntervalSince1970 * 1_000).rounded(.down))
    }
}
