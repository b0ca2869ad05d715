import FlatCache

extension Workload {
    /// The same channels, messages, senders and times, each message's text
    /// written by ``SearchText`` instead: what the search rows index.
    package func withSearchText(seed: UInt64 = 0x5EA2_C4E5) -> Workload {
        var text = SearchText(seed: seed)
        let rewritten = messages.map { list in
            list.map { message in
                var message = message
                message.text = text.next()
                return message
            }
        }
        let channels = zip(channels, rewritten).map { channel, list in
            var channel = channel
            channel.lastMessage = list.last
            return channel
        }
        return Workload(name: name, channels: channels, messages: rewritten)
    }

    /// A workload of these channels and messages.
    init(name: String, channels: [ChatChannel], messages: [[ChatMessage]]) {
        self.name = name
        self.channels = channels
        self.messages = messages
    }
}
