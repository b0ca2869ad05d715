import FlatCache
import Foundation

/// `flatcache-test-helper search-churn <folder> <seed>`: saves, edits and
/// deletes messages in 60 channels and searches after every batch, so that
/// the search index is caught up and its snapshot (`search.lines`) saved over
/// and over, until killed. Prints `searched <n>` after each search.
enum SearchChurn {
    static let channelCount = 60
    static let words = ["trail", "river", "coffee", "東京", "café", "noon", "tent", "ありがとう"]

    static func url(_ channel: Int) -> String { "churn-\(channel)" }

    static func run(folder: URL, seed: UInt64) throws -> Never {
        let cache = try ChatCache(directory: folder, configuration: Configuration(maxMessagesPerChannel: 30))
        var random = XorShift(seed: seed)
        var searches = 0
        while true {
            // About 40 channels changed a batch: past the threshold that saves a snapshot.
            for _ in 0..<40 {
                let channel = random.next(channelCount)
                let id = Int64(1 + random.next(50))
                let text = (0..<3).map { _ in words[random.next(words.count)] }.joined(separator: " ") + " v\(random.next(1_000))"
                let message = ChatMessage(messageID: id, channelURL: url(channel), createdAt: id * 1_000, text: text)
                if random.next(5) == 0 {
                    try cache.messages.blocking.applyChangeLog(updated: [], deletedMessageIDs: [id], in: url(channel))
                } else {
                    try cache.messages.blocking.save([message])
                }
            }
            _ = try cache.search.blocking.messages(matching: words[random.next(words.count)])
            searches += 1
            FileHandle.standardOutput.write(Data("searched \(searches)\n".utf8))
        }
    }
}
