import FlatCache
import BenchmarkKit
import Foundation

/// The record codec on its own: the built-in `ChatMessage` serialization
/// against the alternatives, per message, on the workload's messages.
struct CodecComparison {
    struct Row {
        let name: String
        let encode: Samples  // per message
        let decode: Samples  // per message
        let averageBytes: Int
    }

    var rows = [Row]()

    static func measure(_ workload: Workload) -> CodecComparison {
        progress("codec comparison")
        let messages = workload.messages.flatMap { $0 }
        let json = JSONEncoder()
        json.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let plist = PropertyListEncoder()
        plist.outputFormat = .binary
        let coders: [(String, (ChatMessage) throws -> Data, (Data) throws -> ChatMessage)] = [
            ("ChatMessage.serialize() (built-in)", { try $0.serialize() }, { try ChatMessage(serializedData: $0) }),
            ("Foundation JSON, sorted keys", { try json.encode($0) }, { try JSONDecoder().decode(ChatMessage.self, from: $0) }),
            ("Foundation property list, binary", { try plist.encode($0) },
             { try PropertyListDecoder().decode(ChatMessage.self, from: $0) }),
        ]
        var comparison = CodecComparison()
        for (name, encode, decode) in coders {
            guard let encoded = try? messages.map(encode) else { continue }
            var encodeSamples = Samples()
            var decodeSamples = Samples()
            for _ in 0..<3 {
                encodeSamples.seconds.append(time { for message in messages { _ = try? encode(message) } } / Double(messages.count))
                decodeSamples.seconds.append(time { for data in encoded { _ = try? decode(data) } } / Double(messages.count))
            }
            comparison.rows.append(Row(
                name: name, encode: encodeSamples, decode: decodeSamples,
                averageBytes: encoded.reduce(0) { $0 + $1.count } / max(1, encoded.count)))
        }
        return comparison
    }
}
