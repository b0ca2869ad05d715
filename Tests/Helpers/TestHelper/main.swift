import FlatCache
import Foundation

// A second process for the tests: `flatcache-test-helper upsert <folder> <worker> <count>`
// upserts `count` messages, one save each, into the channel "shared" and into
// "own-<worker>", loading "shared" after every save. Exit status 0 when done,
// 3 when a load came back empty (a file taken for corrupt), 2 for bad arguments.

let arguments = CommandLine.arguments
guard arguments.count == 5, arguments[1] == "upsert", let worker = Int(arguments[3]), let count = Int(arguments[4]) else {
    FileHandle.standardError.write(Data("usage: flatcache-test-helper upsert <folder> <worker> <count>\n".utf8))
    exit(2)
}
do {
    let cache = try ChatCache(
        directory: URL(fileURLWithPath: arguments[2]), configuration: Configuration(maxMessagesPerChannel: 100_000))
    for index in 0..<count {
        let id = Int64(worker * 100_000 + index + 1)
        for url in ["shared", "own-\(worker)"] {
            try cache.messages.save([ChatMessage(messageID: id, channelURL: url, createdAt: id, text: "from \(worker)")])
        }
        if try cache.messages.load(in: "shared").isEmpty {
            FileHandle.standardError.write(Data("worker \(worker): 'shared' read as empty after save \(index)\n".utf8))
            exit(3)
        }
    }
} catch {
    FileHandle.standardError.write(Data("worker \(worker): \(error)\n".utf8))
    exit(1)
}
