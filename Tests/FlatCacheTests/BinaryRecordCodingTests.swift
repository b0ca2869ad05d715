import FlatCache
import FlatCacheSampleServer
import Foundation
import Testing

@Suite struct BinaryRecordCodingTests {
    let server: SampleServer

    init() throws {
        server = try SampleServer()
    }

    @Test func everySampleRecordRoundTrips() throws {
        for message in server.messages { #expect(try ChatMessage(serializedData: message.serialize()) == message) }
        for channel in server.channels { #expect(try ChatChannel(serializedData: channel.serialize()) == channel) }
        for user in server.users { #expect(try ChatUser(serializedData: user.serialize()) == user) }
    }

    @Test func extremesRoundTrip() throws {
        let long = String(repeating: "長い🙂", count: 20_000)  // lengths needing 3-byte prefixes
        let message = ChatMessage(
            messageID: .max, channelURL: "", channelKind: .open, createdAt: .min, updatedAt: -1,
            sender: ChatUser(userID: "", nickname: long, profileURL: "\u{0}"), text: "", customType: long, data: "\n")
        #expect(try ChatMessage(serializedData: message.serialize()) == message)
        let channel = ChatChannel(channelURL: long, kind: .group, name: "", memberCount: .max, createdAt: 0, lastMessage: message)
        #expect(try ChatChannel(serializedData: channel.serialize()) == channel)
    }

    @Test func theSameValueAlwaysGivesTheSameBytes() throws {
        let message = try #require(server.messages.first)
        #expect(try message.serialize() == message.serialize())
        #expect(try ChatMessage(serializedData: message.serialize()).serialize() == (try message.serialize()))
    }

    @Test func decodesFromASliceOfLargerData() throws {
        let message = try #require(server.messages.last)
        let padded = Data([0xFF, 0xFF]) + (try message.serialize()) + Data([0xEE])
        #expect(try ChatMessage(serializedData: padded.dropFirst(2).dropLast()) == message)
    }

    @Test func everyTruncationThrows() throws {
        let bytes = try #require(server.channels.first { $0.lastMessage != nil }).serialize()
        for length in 0..<bytes.count {
            #expect(throws: RecordDecodingError.self) { try ChatChannel(serializedData: bytes.prefix(length)) }
        }
    }

    @Test func trailingBytesThrow() throws {
        let bytes = try #require(server.users.first).serialize() + Data([0])
        #expect(throws: RecordDecodingError.self) { try ChatUser(serializedData: bytes) }
    }

    @Test func anUnknownVersionThrows() throws {
        var bytes = try #require(server.messages.first).serialize()
        bytes[bytes.startIndex] = 2
        #expect(throws: RecordDecodingError.self) { try ChatMessage(serializedData: bytes) }
    }

    @Test func invalidUTF8Throws() throws {
        var bytes = try ChatUser(userID: "ab", nickname: "", profileURL: "").serialize()
        bytes[bytes.startIndex + 2] = 0xC3  // a lead byte followed by an ASCII byte
        #expect(throws: RecordDecodingError.self) { try ChatUser(serializedData: bytes) }
    }

    @Test func invalidUTF8AsLongAsItsRepairThrows() throws {
        // A 4-byte sequence cut to 3 bytes: repaired, it becomes U+FFFD, also 3 bytes long
        var bytes = try ChatUser(userID: "abc", nickname: "", profileURL: "").serialize()
        bytes.replaceSubrange((bytes.startIndex + 2)..<(bytes.startIndex + 5), with: [0xF0, 0x9F, 0x98])
        #expect(throws: RecordDecodingError.self) { try ChatUser(serializedData: bytes) }
        // and valid text of every width decodes to itself
        let text = "a é 你 🎉 \u{FFFD}"
        #expect(try ChatUser(serializedData: try ChatUser(userID: text, nickname: text, profileURL: "").serialize()).userID == text)
    }

    @Test func aLengthPastTheEndThrows() {
        // version 1, then a userID whose length says 2^27 - 1
        let bytes = Data([1, 0xFF, 0xFF, 0xFF, 0x7F, 0x41])
        #expect(throws: RecordDecodingError.self) { try ChatUser(serializedData: bytes) }
        // a length prefix that never ends
        #expect(throws: RecordDecodingError.self) { try ChatUser(serializedData: Data([1, 0x80, 0x80, 0x80, 0x80, 0x80])) }
    }

    @Test func aLengthNotInItsShortestFormThrows() throws {
        // userID "" written as the two-byte length 0x80 0x00: the same value, a second encoding
        #expect(throws: RecordDecodingError.self) { try ChatUser(serializedData: Data([1, 0x80, 0x00, 0, 0])) }
        #expect(try ChatUser(serializedData: Data([1, 0, 0, 0])) == ChatUser(userID: "", nickname: ""))
    }

    @Test func acceptedBytesAreExactlyTheCanonicalEncoding() throws {
        // Whatever decodes re-encodes to the same bytes (the fuzzer's invariant, on mutated real records).
        var state: UInt64 = 42
        let seeds = try server.messages.prefix(30).map { try $0.serialize() }
        for round in 0..<5_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1
            var bytes = seeds[round % seeds.count]
            bytes[bytes.startIndex + Int(state >> 33) % bytes.count] ^= UInt8(truncatingIfNeeded: state >> 50) | 1
            if let message = try? ChatMessage(serializedData: bytes) { #expect(try message.serialize() == bytes) }
        }
    }

    @Test func aBadFlagOrKindThrows() throws {
        let message = ChatMessage(messageID: 1, channelURL: "c", createdAt: 0, text: "")
        var badKind = try message.serialize()
        badKind[badKind.startIndex + 25] = 7  // after version and three integers
        #expect(throws: RecordDecodingError.self) { try ChatMessage(serializedData: badKind) }
        var badFlag = try message.serialize()
        badFlag[badFlag.endIndex - 1] = 2  // the sender flag
        #expect(throws: RecordDecodingError.self) { try ChatMessage(serializedData: badFlag) }
    }

    @Test func arbitraryBytesNeverTrap() throws {
        // A seeded stream of mutations of real records and of random bytes: each must decode or throw.
        var state: UInt64 = 0x1234_5678
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        let seeds = try server.messages.prefix(50).map { try $0.serialize() } + server.channels.map { try $0.serialize() }
        for round in 0..<20_000 {
            var bytes = round % 4 == 0
                ? Data((0..<Int(next() % 64)).map { _ in UInt8(truncatingIfNeeded: next()) })
                : seeds[Int(next()) % seeds.count]
            for _ in 0..<(1 + Int(next() % 4)) where !bytes.isEmpty {
                bytes[bytes.startIndex + Int(next()) % bytes.count] = UInt8(truncatingIfNeeded: next())
            }
            _ = try? ChatMessage(serializedData: bytes)
            _ = try? ChatChannel(serializedData: bytes)
            _ = try? ChatUser(serializedData: bytes)
        }
    }
}
