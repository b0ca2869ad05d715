/// The order records take in their files (format v1, normative): the same
/// records always give the same bytes.
enum CanonicalOrder {
    /// Oldest first by creation time, then by message id.
    static func messages<M: MessageRecord>(_ messages: [M]) -> [M] {
        messages.sorted { ($0.createdAt, $0.messageID) < ($1.createdAt, $1.messageID) }
    }

    /// Newest last message first, then by channel URL (UTF-8 byte order).
    static func channels<C: ChannelRecord>(_ channels: [C]) -> [C] {
        channels.sorted {
            $0.lastMessageAt != $1.lastMessageAt
                ? $0.lastMessageAt > $1.lastMessageAt
                : RecordKey($0.channelURL) < RecordKey($1.channelURL)
        }
    }

    /// By user id (UTF-8 byte order).
    static func users<U: UserRecord>(_ users: [U]) -> [U] {
        users.sorted { RecordKey($0.userID) < RecordKey($1.userID) }
    }
}
