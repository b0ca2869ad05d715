@testable import FlatCache
import Foundation
import Testing

/// Properties of the key -> file mapping over thousands of generated strings
/// (a seeded generator, so a failure replays): any channel URL maps to one
/// safe file inside `messages/`, different strings never share one, the same
/// string always maps to the same one; user ids never merge.
@Suite struct KeyPropertyTests {
    /// Strings built to hurt: path syntax, control characters, NUL, every
    /// Unicode plane, canonically equivalent pairs, long runs, empty pieces.
    struct HostileStrings: IteratorProtocol {
        var state: UInt64

        mutating func nextRandom() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 17
        }

        mutating func next() -> String? {
            let pieces = [
                "/", "..", ".", "\\", "%2e", "%2F", "\u{0}", "\n", "\r", " ", "~", ":", "*", "?", "\"",
                "a", "A", "é", "e\u{301}", "İ", "ß", "ﬃ", "🙂", "👨‍👩‍👧", "東京", "\u{202E}", "\u{FEFF}",
                "\u{10FFFF}", "sendbird_group_channel_", "https://example.com/", String(repeating: "x", count: 300),
            ]
            var string = ""
            for _ in 0..<(1 + Int(nextRandom() % 12)) {
                string += pieces[Int(nextRandom() % UInt64(pieces.count))]
                if nextRandom() % 4 == 0, let scalar = Unicode.Scalar(UInt32(nextRandom() % 0x10FFFF)) {
                    string.unicodeScalars.append(scalar)
                }
            }
            return string
        }
    }

    @Test func everyChannelURLMapsToOneSafeFileOfItsOwn() throws {
        let layout = CacheLayout(root: "/cache")
        var strings = HostileStrings(state: 20_261_122)
        var fileByBytes = [[UInt8]: String]()
        for _ in 0..<5_000 {
            guard let url = strings.next() else { break }
            let path = try layout.messagesFile(forChannel: url).path

            // Inside messages/, a 64-hex-digit name: no separator, no dot-dot, nothing to escape.
            let name = String(path.dropFirst("/cache/messages/".count))
            #expect(path.hasPrefix("/cache/messages/"))
            #expect(name.count == 70 && name.hasSuffix(".lines"))
            #expect(name.dropLast(6).allSatisfy { "0123456789abcdef".contains($0) })

            // Same bytes, same file (again, and as before); different bytes, different file.
            #expect(try layout.messagesFile(forChannel: url).path == path)
            let bytes = Array(url.utf8)
            if let earlier = fileByBytes[bytes] { #expect(earlier == path) }
            fileByBytes[bytes] = path
        }
        #expect(Set(fileByBytes.values).count == fileByBytes.count)
        #expect(fileByBytes.count > 4_000)  // the generator really produced distinct strings
    }

    @Test func userIDsThatDifferInAnyByteNeverMerge() throws {
        let folder = try TemporaryFolder()
        let cache = try ChatCache(directory: folder.url)
        var strings = HostileStrings(state: 7)
        var distinct = [[UInt8]: ChatUser]()
        for index in 0..<500 {
            guard let id = strings.next(), !id.isEmpty else { continue }
            distinct[Array(id.utf8)] = ChatUser(userID: id, nickname: "user \(index)")
        }
        try cache.users.save(Array(distinct.values))
        let loaded = try cache.users.load()
        #expect(loaded.count == distinct.count)
        for user in loaded { #expect(distinct[Array(user.userID.utf8)] == user) }
    }

    @Test func hostileChannelURLsRoundTripThroughRealFiles() throws {
        let folder = try TemporaryFolder()
        let cache = try ChatCache(directory: folder.appending("cache"))
        var strings = HostileStrings(state: 99)
        var saved = [[UInt8]: ChatMessage]()
        for index in 0..<200 {
            guard let url = strings.next(), !url.isEmpty, saved[Array(url.utf8)] == nil else { continue }
            let message = Fixtures.message(Int64(index + 1), at: 1, in: url)
            try cache.messages.save([message])
            saved[Array(url.utf8)] = message
        }
        for message in saved.values {
            #expect(try cache.messages.load(in: message.channelURL) == [message])
        }
        // Nothing escaped the cache folder.
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path) == ["cache"])
    }
}
