import FlatCache

/// SplitMix64: a small, seeded random number generator, so a property test
/// gives the same records on every run with the same seed.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Random built-in records that lean on the edges: extreme and negative
/// integers, empty, long and odd strings (NUL, emoji, CJK, combining marks),
/// every optional `nil` and set, both channel kinds.
struct RecordGenerator {
    var random: SeededGenerator

    init(seed: UInt64) {
        random = SeededGenerator(seed: seed)
    }

    static let boundaryIntegers: [Int64] = [
        .min, .min + 1, -1, 0, 1, .max - 1, .max,
        Int64(Int32.min), Int64(Int32.max), Int64(UInt32.max), 1_700_000_000_000,
    ]

    /// Pieces strings are made of: ASCII, controls, characters JSON and Base64
    /// treat specially, multi-byte and multi-scalar characters, a lone combining mark.
    static let pieces: [String] = [
        "a", "Z", "0", " ", "\0", "\n", "\r\n", "\t", "\u{1}", "\u{7F}", "\"", "\\", "/", "=", "+",
        "é", "e\u{301}", "\u{301}", "👋", "👩‍👩‍👧‍👦", "🇯🇵", "東京", "한국어", "\u{FEFF}", "\u{200B}",
        "\u{2028}", "\u{FFFD}", "\u{10FFFF}", "ﬀ", "İ",
    ]

    /// UTF-8 lengths around the LEB128 steps (1, 2 and 3 length bytes).
    static let lengthSteps = [1, 127, 128, 129, 16_383, 16_384]

    mutating func integer() -> Int64 {
        Bool.random(using: &random)
            ? Self.boundaryIntegers.randomElement(using: &random) ?? 0
            : Int64.random(in: .min ... .max, using: &random)
    }

    mutating func memberCount() -> Int {
        switch Int.random(in: 0..<4, using: &random) {
        case 0: [Int.min, Int.min + 1, -1, 0, 1, Int.max].randomElement(using: &random) ?? 0
        case 1: -Int.random(in: 1...1_000, using: &random)
        case 2: Int.random(in: 0...10_000, using: &random)
        default: Int.random(in: .min ... .max, using: &random)
        }
    }

    mutating func string() -> String {
        switch Int.random(in: 0..<10, using: &random) {
        case 0, 1:
            return ""
        case 2:
            return String(repeating: "x", count: Self.lengthSteps.randomElement(using: &random) ?? 1)
        case 3:
            return pieces(Int.random(in: 200...3_000, using: &random))
        default:
            return pieces(Int.random(in: 1...12, using: &random))
        }
    }

    /// A string that is never empty.
    mutating func key(_ index: Int) -> String {
        string() + "#\(index)"
    }

    mutating func user(id: String? = nil) -> ChatUser {
        ChatUser(userID: id ?? string(), nickname: string(), profileURL: string())
    }

    mutating func message(in channelURL: String? = nil) -> ChatMessage {
        ChatMessage(
            messageID: integer(), channelURL: channelURL ?? string(),
            channelKind: Bool.random(using: &random) ? .group : .open,
            createdAt: integer(), updatedAt: integer(),
            sender: Int.random(in: 0..<3, using: &random) == 0 ? nil : user(),
            text: string(), customType: string(), data: string())
    }

    mutating func channel(url: String? = nil) -> ChatChannel {
        ChatChannel(
            channelURL: url ?? string(), kind: Bool.random(using: &random) ? .group : .open,
            name: string(), coverURL: string(), memberCount: memberCount(), createdAt: integer(),
            lastMessage: Bool.random(using: &random) ? message() : nil)
    }

    private mutating func pieces(_ count: Int) -> String {
        var text = ""
        for _ in 0..<count { text += Self.pieces.randomElement(using: &random) ?? "" }
        return text
    }
}
