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
