/// The order records take in their files (format v1, normative): the same
/// records always give the same bytes. A source or a test double that keeps
/// records in this order lists them as the cache does.
///
/// ```swift
/// let older = ChatMessage(messageID: 2, channelURL: "trip", createdAt: 1_000, text: "first")
/// let newer = ChatMessage(messageID: 1, channelURL: "trip", createdAt: 2_000, text: "second")
/// assert(CanonicalOrder.precedes(older, newer))   // time first, then id
/// ```
public enum CanonicalOrder {
    /// Oldest first by creation time, then by message id.
    ///
    /// Plain index loops and field comparisons: this runs unspecialized for an
    /// app's own record type, where `zip` and tuple comparisons look up
    /// generic metadata on every step.
    @_specialize(where M == ChatMessage)
    static func messages<M: MessageRecord>(_ messages: [M]) -> [M] {
        isOrdered(messages) ? messages : messages.sorted(by: precedes)
    }

    /// ``messages(_:)`` in place: sorts only when out of order.
    @_specialize(where M == ChatMessage)
    static func order<M: MessageRecord>(_ messages: inout [M]) {
        if !isOrdered(messages) { messages.sort(by: precedes) }
    }

    /// Whether `messages` are in canonical order: one pass, which is all a
    /// list needs that is in order (servers send pages in order, and cached
    /// lists are). Through a buffer pointer: an array's subscript would copy
    /// each message to compare it.
    private static func isOrdered<M: MessageRecord>(_ messages: [M]) -> Bool {
        messages.withUnsafeBufferPointer { buffer in
            var index = 1
            while index < buffer.count, !precedes(buffer[index], buffer[index - 1]) { index += 1 }
            return index >= buffer.count
        }
    }

    /// Whether `a` comes before `b` in a message file: older, or as old with a smaller id.
    public static func precedes<M: MessageRecord>(_ a: M, _ b: M) -> Bool {
        a.createdAt != b.createdAt ? a.createdAt < b.createdAt : a.messageID < b.messageID
    }

    /// Newest last message first, then by channel URL (UTF-8 byte order).
    public static func channels<C: ChannelRecord>(_ channels: [C]) -> [C] {
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
