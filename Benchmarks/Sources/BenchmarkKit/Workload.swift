import FlatCache
import Foundation

/// A deterministic data set: `channelCount` group channels of `messagesPerChannel`
/// messages each, made from a fixed seed so every run measures the same bytes.
///
/// Messages are the built-in `ChatMessage`: text of 20–400 characters mixing
/// ASCII, emoji and CJK, a sender, and now and then custom data.
package struct Workload: Sendable {
    package let name: String
    package let channels: [ChatChannel]
    /// The messages of `channels[i]`, oldest first.
    package let messages: [[ChatMessage]]

    package var messageCount: Int { messages.reduce(0) { $0 + $1.count } }

    package static func small() -> Workload { Workload(name: "S", channelCount: 100, messagesPerChannel: 100) }
    package static func large() -> Workload { Workload(name: "L", channelCount: 1_000, messagesPerChannel: 200) }
    /// How cost grows: ten times L's channels, half its messages each (`--workload XL`, no targets).
    package static func extraLarge() -> Workload { Workload(name: "XL", channelCount: 10_000, messagesPerChannel: 100) }

    /// The workload named `name` (S, L or XL).
    package static func named(_ name: String) -> Workload? {
        switch name {
        case "S": small()
        case "L": large()
        case "XL": extraLarge()
        default: nil
        }
    }

    package init(name: String, channelCount: Int, messagesPerChannel: Int, seed: UInt64 = 0x5EED_F1A7_CAC4E) {
        var random = SplitMix64(seed: seed)
        let users = (0..<50).map { index in
            ChatUser(
                userID: "user-\(index)", nickname: Self.nicknames[index % Self.nicknames.count] + " \(index)",
                profileURL: "https://cdn.example.com/avatars/user-\(index).png")
        }
        var channels = [ChatChannel]()
        var messages = [[ChatMessage]]()
        var nextID: Int64 = 1
        for index in 0..<channelCount {
            // From a stream of its own, so the URLs do not depend on how many messages came before.
            var urlRandom = SplitMix64(seed: seed ^ UInt64(index))
            let url = "sendbird_group_channel_\(index)_\(String(urlRandom.next(), radix: 16))"
            var time: Int64 = 1_750_000_000_000 + Int64(random.next(below: 86_400_000))
            var list = [ChatMessage]()
            list.reserveCapacity(messagesPerChannel)
            for _ in 0..<messagesPerChannel {
                time += Int64(1 + random.next(below: 600_000))
                var message = ChatMessage(
                    messageID: nextID, channelURL: url, createdAt: time,
                    sender: users[random.next(below: users.count)], text: Self.text(&random))
                if random.next(below: 10) == 0 {
                    message.customType = "image"
                    message.data = #"{"height":960,"url":"https://cdn.example.com/img/\#(nextID).jpg","width":1280}"#
                }
                if random.next(below: 12) == 0 { message.updatedAt = time + 30_000 }
                nextID += 1
                list.append(message)
            }
            channels.append(ChatChannel(
                channelURL: url, kind: .group, name: "Channel \(index)",
                coverURL: "https://cdn.example.com/covers/\(index).jpg",
                memberCount: 2 + random.next(below: 40), createdAt: 1_700_000_000_000, lastMessage: list.last))
            messages.append(list)
        }
        self.name = name
        self.channels = channels
        self.messages = messages
    }

    /// 20–400 characters from words in several scripts.
    private static func text(_ random: inout SplitMix64) -> String {
        let target = 20 + random.next(below: 381)
        var text = ""
        while text.count < target {
            if !text.isEmpty { text += " " }
            text += words[random.next(below: words.count)]
        }
        return String(text.prefix(target))
    }

    private static let words = [
        "hello", "are", "we", "still", "on", "for", "Saturday", "the", "trail", "is", "12", "km", "see", "you",
        "there", "tomorrow", "meeting", "notes", "review", "design", "ship", "it", "lunch", "coffee", "later",
        "👋", "😂", "🎉", "🚀", "👍", "🙏", "☕️", "🥾",
        "了解", "ありがとう", "東京", "明日", "会議", "谢谢", "好的", "我们", "下周见",
        "привет", "спасибо", "café", "naïve", "Ødegaard", "مرحبا",
    ]

    private static let nicknames = ["Mina", "José", "Zoë", "山田", "Олег", "Aisha", "李伟", "Sven", "Amara", "نور"]
}

/// The SplitMix64 generator: tiny, fast and the same on every platform.
package struct SplitMix64 {
    private var state: UInt64

    package init(seed: UInt64) { state = seed }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in `0..<bound`.
    package mutating func next(below bound: Int) -> Int {
        Int(next() % UInt64(bound))
    }
}
