import FlatCache

/// The story's data: five users, three channels, and the messages of
/// General, all at fixed times so that every run tells the same story.
enum StorySeed {
    /// The channel the story's collections show.
    static let general = "general"
    /// The channel the user leaves while offline.
    static let books = "books"

    /// Ana (the user), Ben, Chen, Dara and Eli.
    static let users = ["Ana", "Ben", "Chen", "Dara", "Eli"].map { ChatUser(userID: $0.lowercased(), nickname: $0) }
    /// The profiles the app saved at sign-in: its user's and a contact's.
    static var signedIn: [ChatUser] { Array(users.prefix(2)) }

    /// Nov 14 2023 22:13 UTC: message `#n` of General is sent `n` minutes after it.
    static let start: Int64 = 1_700_000_000_000

    /// General (no message yet), Hiking and Books.
    static let channels = [
        channel(general, "General"),
        channel("hiking", "Hiking", last: (901, start - 3_600_000)),
        channel(books, "Books", last: (902, start - 7_200_000)),
    ]

    /// The channel the user joins while offline.
    static let climbing = channel("climbing", "Climbing", last: (903, start + 45 * 60_000))

    /// General's messages `ids`, sent a minute apart by the users in turn
    /// (the first 60 by Ana, Ben, Chen and Dara; Eli joins after).
    static func messages(_ ids: ClosedRange<Int64>) -> [ChatMessage] {
        ids.map { id in
            let sender = users[Int((id - 1) % (id <= 60 ? 4 : 5))]
            return ChatMessage(
                messageID: id, channelURL: general, createdAt: start + id * 60_000, sender: sender,
                text: "\(sender.nickname)'s message #\(id)")
        }
    }

    /// A channel created a day before the story, with its last message (an id and a time) if any.
    private static func channel(_ url: String, _ name: String, last: (id: Int64, at: Int64)? = nil) -> ChatChannel {
        ChatChannel(
            channelURL: url, kind: .group, name: name, memberCount: users.count, createdAt: start - 86_400_000,
            lastMessage: last.map { ChatMessage(messageID: $0.id, channelURL: url, createdAt: $0.at, text: "See you there") })
    }
}
