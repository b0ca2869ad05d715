import FlatCache

/// The only messages the `churn` command ever writes, so that a checker can
/// tell them from anything else (`CrashTests` checks records against this scheme).
enum CrashRecords {
    static let channelCount = 8

    static func url(_ channel: Int) -> String { "crash-channel-\(channel)" }

    static func message(channel: Int, id: Int64, version: Int) -> ChatMessage {
        ChatMessage(
            messageID: id, channelURL: url(channel), createdAt: 1_000 * id,
            text: "channel \(channel) message \(id) version \(version)")
    }
}

/// Xorshift64: the writers' small seeded generator, so that a run replays from its seed.
struct XorShift {
    private var state: UInt64

    init(seed: UInt64) { state = seed | 1 }

    /// A number in `0..<bound`.
    mutating func next(_ bound: Int) -> Int {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return Int(state % UInt64(bound))
    }
}
