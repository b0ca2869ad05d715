import FlatCacheMatrix
import Foundation
import Testing

/// ``MatrixEvent`` decoded from the JSON the client-server API sends, and
/// the Matrix records' serialization. No homeserver needed: these always run.
@Suite struct MatrixEventTests {
    static let room = "!room:example.org"
    static let mina = "@mina:example.org"

    private func event(_ json: String) throws -> MatrixEvent {
        try JSONDecoder().decode(MatrixEvent.self, from: Data(json.utf8))
    }

    @Test func aPlainMessageIsAShownMessage() throws {
        let event = try event("""
            {"event_id":"$m1","type":"m.room.message","sender":"@mina:example.org","origin_server_ts":1700000000000,
             "content":{"msgtype":"m.text","body":"Hello"}}
            """)
        #expect(event.eventID == "$m1")
        #expect(event.stateKey == nil)
        #expect(!event.isRedacted)
        #expect(event.editedEventID == nil)
        let message = try #require(event.message(in: Self.room))
        #expect(message == MatrixMessage(
            eventID: "$m1", roomID: Self.room, sender: Self.mina, createdAt: 1_700_000_000_000, msgtype: "m.text", body: "Hello"))
        #expect(!message.isEdited)
    }

    @Test func aBundledEditIsApplied() throws {
        let event = try event("""
            {"event_id":"$m1","type":"m.room.message","sender":"@mina:example.org","origin_server_ts":1700000000000,
             "content":{"msgtype":"m.text","body":"Helo"},
             "unsigned":{"m.relations":{"m.replace":{
               "event_id":"$e1","type":"m.room.message","sender":"@mina:example.org","origin_server_ts":1700000060000,
               "content":{"msgtype":"m.text","body":"* Hello",
                          "m.new_content":{"msgtype":"m.notice","body":"Hello"},
                          "m.relates_to":{"rel_type":"m.replace","event_id":"$m1"}}}}}}
            """)
        #expect(event.replacement?.eventID == "$e1")
        let message = try #require(event.message(in: Self.room))
        #expect(message.body == "Hello")  // m.new_content, not the fallback "* Hello"
        #expect(message.msgtype == "m.notice")
        #expect(message.createdAt == 1_700_000_000_000)
        #expect(message.editedAt == 1_700_000_060_000)
        #expect(message.isEdited)
    }

    @Test func theTransactionIDIsTheMessagesRequestID() throws {
        // Synapse adds unsigned.transaction_id to the events the reading access token sent.
        let own = try event("""
            {"event_id":"$m1","type":"m.room.message","sender":"@mina:example.org","origin_server_ts":1700000000000,
             "content":{"msgtype":"m.text","body":"Hello"},"unsigned":{"age":12,"transaction_id":"8F3A-req"}}
            """)
        #expect(own.transactionID == "8F3A-req")
        #expect(own.message(in: Self.room)?.requestID == "8F3A-req")
        // Another sender's message, an empty id or one of another type has none.
        for unsigned in [#"{"age":12}"#, #"{"transaction_id":""}"#, #"{"transaction_id":42}"#] {
            let other = try event("""
                {"event_id":"$m2","type":"m.room.message","sender":"@bea:example.org","origin_server_ts":1700000000000,
                 "content":{"msgtype":"m.text","body":"Hi"},"unsigned":\(unsigned)}
                """)
            #expect(other.transactionID == nil)
            #expect(other.message(in: Self.room)?.requestID == nil)
            #expect(other.message(in: Self.room) != nil)
        }
    }

    @Test func anEditedOwnMessageKeepsItsRequestID() throws {
        let event = try event("""
            {"event_id":"$m1","type":"m.room.message","sender":"@mina:example.org","origin_server_ts":1700000000000,
             "content":{"msgtype":"m.text","body":"Helo"},
             "unsigned":{"transaction_id":"req-1","m.relations":{"m.replace":{
               "event_id":"$e1","type":"m.room.message","sender":"@mina:example.org","origin_server_ts":1700000060000,
               "content":{"msgtype":"m.text","body":"* Hello","m.new_content":{"msgtype":"m.text","body":"Hello"},
                          "m.relates_to":{"rel_type":"m.replace","event_id":"$m1"}}}}}}
            """)
        let message = try #require(event.message(in: Self.room))
        #expect(message.body == "Hello")
        #expect(message.requestID == "req-1")
    }

    @Test func anEditEventNamesTheEditedEventAndIsNoMessage() throws {
        let event = try event("""
            {"event_id":"$e1","type":"m.room.message","sender":"@mina:example.org","origin_server_ts":1700000060000,
             "content":{"msgtype":"m.text","body":"* Hello",
                        "m.new_content":{"msgtype":"m.text","body":"Hello"},
                        "m.relates_to":{"rel_type":"m.replace","event_id":"$m1"}}}
            """)
        #expect(event.editedEventID == "$m1")
        #expect(event.content.newContent?.body == "Hello")
        #expect(!event.isShownMessage)
        #expect(event.message(in: Self.room) == nil)
    }

    @Test func aRedactedMessageIsNoMessage() throws {
        let event = try event("""
            {"event_id":"$m2","type":"m.room.message","sender":"@mina:example.org","origin_server_ts":1700000000000,
             "content":{},
             "unsigned":{"redacted_because":{"event_id":"$r1","type":"m.room.redaction","sender":"@mina:example.org",
                                             "origin_server_ts":1700000090000,"content":{},"redacts":"$m2"}}}
            """)
        #expect(event.isRedacted)
        #expect(event.content.body == nil)
        #expect(event.message(in: Self.room) == nil)
    }

    @Test func aRedactionNamesItsTargetInEitherRoomVersion() throws {
        let v11 = try event("""
            {"event_id":"$r1","type":"m.room.redaction","sender":"@mina:example.org","origin_server_ts":1700000090000,
             "content":{"redacts":"$m1"}}
            """)
        let v10 = try event("""
            {"event_id":"$r2","type":"m.room.redaction","sender":"@mina:example.org","origin_server_ts":1700000090000,
             "redacts":"$m2","content":{}}
            """)
        #expect(v11.redacts == "$m1")
        #expect(v10.redacts == "$m2")
        #expect(v11.message(in: Self.room) == nil)
    }

    @Test func aFieldOfAnotherTypeReadsAsMissing() throws {
        let event = try event("""
            {"event_id":"$m3","type":"m.room.message","sender":"@mina:example.org","origin_server_ts":1700000000000,
             "content":{"msgtype":"m.text","body":42,"m.relates_to":"nope"}}
            """)
        #expect(event.content.body == nil)
        #expect(event.content.msgtype == "m.text")
        #expect(event.content.relation == nil)
        #expect(event.message(in: Self.room)?.body == "")
    }

    @Test func aRoomNameIsAStateEventWithAnEmptyStateKey() throws {
        let event = try event("""
            {"event_id":"$n1","type":"m.room.name","sender":"@mina:example.org","origin_server_ts":1700000000000,
             "state_key":"","content":{"name":"Trip"}}
            """)
        #expect(event.type == "m.room.name")
        #expect(event.stateKey == "")
        #expect(event.content.name == "Trip")
        #expect(event.message(in: Self.room) == nil)
    }

    // MARK: - Serialization

    static let message = MatrixMessage(
        eventID: "$m1", roomID: room, sender: mina, createdAt: 1_700_000_000_000, editedAt: 1_700_000_060_000,
        msgtype: "m.text", body: "Grüße / \"quoted\" ✓")

    @Test func aMessageRoundTripsAndEqualMessagesGiveEqualBytes() throws {
        let data = try Self.message.serialize()
        #expect(try MatrixMessage(serializedData: data) == Self.message)
        // The same value decoded from JSON with its keys in another order serializes to the same bytes.
        let reordered = try JSONDecoder().decode(MatrixMessage.self, from: Data("""
            {"body":"Grüße / \\"quoted\\" ✓","msgtype":"m.text","editedAt":1700000060000,"createdAt":1700000000000,
             "sender":"@mina:example.org","roomID":"!room:example.org","eventID":"$m1"}
            """.utf8))
        #expect(reordered == Self.message)
        #expect(try reordered.serialize() == data)
        var other = Self.message
        other.body = "Hello"
        #expect(try other.serialize() != data)
    }

    @Test func aMessageWithoutARequestIDHasTheBytesItHadBeforeTheField() throws {
        // These bytes were made before MatrixMessage had a requestID: they read, and are made, the same.
        let old = #"{"body":"Grüße / \"quoted\" ✓","createdAt":1700000000000,"editedAt":1700000060000,"eventID":"$m1","#
            + #""msgtype":"m.text","roomID":"!room:example.org","sender":"@mina:example.org"}"#
        #expect(try MatrixMessage(serializedData: Data(old.utf8)) == Self.message)
        #expect(Self.message.requestID == nil)
        #expect(String(decoding: try Self.message.serialize(), as: UTF8.self) == old)
    }

    @Test func aMessageWithARequestIDKeepsItInItsBytes() throws {
        var message = Self.message
        message.requestID = "req-1"
        let data = try message.serialize()
        #expect(String(decoding: data, as: UTF8.self).contains(#""requestID":"req-1""#))
        let read = try MatrixMessage(serializedData: data)
        #expect(read == message)
        #expect(read.requestID == "req-1")
        #expect(data != (try Self.message.serialize()))
    }

    @Test(arguments: [nil, message])
    func aRoomRoundTripsAndEqualRoomsGiveEqualBytes(lastMessage: MatrixMessage?) throws {
        let room = MatrixRoom(
            roomID: Self.room, name: "Trip", avatarURL: "mxc://example.org/abc", joinedMemberCount: 2,
            createdAt: 1_690_000_000_000, lastMessage: lastMessage)
        let data = try room.serialize()
        #expect(try MatrixRoom(serializedData: data) == room)
        let copy = MatrixRoom(
            roomID: "!room:example.org", name: "Trip", avatarURL: "mxc://example.org/abc", joinedMemberCount: 2,
            createdAt: 1_690_000_000_000, lastMessage: lastMessage)
        #expect(try copy.serialize() == data)
        #expect(String(decoding: data, as: UTF8.self).contains("mxc://example.org/abc"))  // slashes unescaped
    }
}
