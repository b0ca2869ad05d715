import FlatCache

extension Workload {
    /// A word no message has, made for `round`: what the first search after a change looks for.
    package static func searchMarker(_ stem: String, round: Int) -> String { "\(stem)\(round)q" }

    /// One new message for `round`, in a channel of its own, newest there:
    /// chat text with ``searchMarker(_:round:)`` ("zephyr") in it.
    package func searchArrival(round: Int) -> ChatMessage {
        var text = SearchText(seed: 0xA441 &+ UInt64(round))
        let index = (round * 37) % channels.count
        var message = messages[index][messages[index].count / 2]
        message.messageID = 3_000_000_000 + Int64(round)
        message.createdAt = (messages[index].last?.createdAt ?? 0) + Int64(round + 1)
        message.text = text.next() + " " + Self.searchMarker("zephyr", round: round)
        return message
    }

    /// One channel's change log for `round`: 5 messages edited (each gains
    /// ``searchMarker(_:round:)``, "amended") and the 2 after them deleted;
    /// a different channel every round.
    package func searchChangeLog(round: Int) -> ChangeLog {
        let index = (round * 53 + 11) % channels.count
        let list = messages[index]
        let start = (round * 7) % max(1, list.count - 7)
        let updated = list[start..<start + 5].map { original in
            var edited = original
            edited.text = original.text + " " + Self.searchMarker("amended", round: round)
            edited.updatedAt = original.createdAt + 1
            return edited
        }
        return ChangeLog(
            channelURL: channels[index].channelURL, updated: updated, deleted: [list[start + 5].messageID, list[start + 6].messageID])
    }
}
