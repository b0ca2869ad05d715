public import Foundation

/// A chat message, ready to cache in a compact binary form (see `docs/format.md`).
///
/// ```swift
/// let message = ChatMessage(
///     messageID: 42, channelURL: "sendbird_group_channel_1", createdAt: 1_700_000_000_000,
///     sender: ChatUser(userID: "mina", nickname: "Mina"), text: "Hello 👋")
/// try await cache.messages.save([message])
/// ```
public struct ChatMessage: MessageRecord, Codable, Hashable, Identifiable {
    /// The server's id; 0 for a message not sent yet (never cached).
    public var messageID: Int64
    /// The URL of the channel the message belongs to.
    public var channelURL: String
    /// Whether that channel is a group or an open channel.
    public var channelKind: ChatChannel.Kind
    /// When it was created, in milliseconds since 1970.
    public var createdAt: Int64
    /// When it was last edited, in milliseconds since 1970; 0 if never.
    public var updatedAt: Int64
    /// Who sent it; `nil` for an admin or system message.
    public var sender: ChatUser?
    /// The message text.
    public var text: String
    /// The app's own message category ("", "image", "poll", ...).
    public var customType: String
    /// Free-form app data, often JSON.
    public var data: String
    /// The key the sending client made up for it (see ``MessageRecord/requestID``);
    /// `nil` for a message another client sent, or one not matched to an ``Outbox`` entry.
    public var requestID: String?

    /// Its ``text``: what search finds it by.
    public var searchableText: String? { text }
    /// Its sender's id: what a search's ``SearchFilter/senderIDs`` matches.
    public var senderID: String? { sender?.userID }

    /// Whether ``channelKind`` is ``ChatChannel/Kind/group``.
    public var isInGroupChannel: Bool {
        // A pattern, not `==`: the synthesized equality, called with the kind's address, copied the whole message first.
        if case .group = channelKind { true } else { false }
    }

    /// A message with the given fields.
    public init(
        messageID: Int64, channelURL: String, channelKind: ChatChannel.Kind = .group,
        createdAt: Int64, updatedAt: Int64 = 0,
        sender: ChatUser? = nil, text: String, customType: String = "", data: String = "",
        requestID: String? = nil
    ) {
        self.messageID = messageID
        self.channelURL = channelURL
        self.channelKind = channelKind
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.sender = sender
        self.text = text
        self.customType = customType
        self.data = data
        self.requestID = requestID
    }
}

extension ChatMessage {
    /// The record format version ``serialize()`` writes for a message without a ``requestID``.
    static let binaryVersion: UInt8 = 1
    /// The version it writes for one with a ``requestID``: version 1's fields, then the request id.
    /// Additive: a message without one keeps its version-1 bytes.
    static let binaryVersionWithRequestID: UInt8 = 2

    /// The message's bytes: a version byte, `messageID`, `createdAt`, `updatedAt`,
    /// `channelKind`, `channelURL`, `text`, `customType`, `data`, then the sender
    /// (a flag, then the user's own bytes); with a ``requestID``, version 2
    /// and the request id after them.
    ///
    /// ```swift
    /// let message = ChatMessage(messageID: 1, channelURL: "trip", createdAt: 1_700_000_000_000, text: "Hi")
    /// let bytes = try message.serialize()
    /// let decoded = try ChatMessage(serializedData: bytes)   // == message
    /// ```
    ///
    /// - Throws: ``RecordEncodingError`` when a string (the sender's included)
    ///   has more than 268,435,455 (2^28 - 1) UTF-8 bytes, the most the format
    ///   holds; nothing is copied then.
    public func serialize() throws(RecordEncodingError) -> Data {
        var writer = BinaryWriter(capacity: estimatedSize)
        try write(to: &writer)
        return writer.data
    }

    /// Decodes a message from bytes that ``serialize()`` produced.
    ///
    /// - Throws: ``RecordDecodingError`` for anything else.
    public init(serializedData: Data) throws(RecordDecodingError) {
        self = try BinaryReader.read(serializedData) { reader throws(RecordDecodingError) in try ChatMessage(reading: &reader) }
    }

    /// The bytes of each of `messages`, as ``serialize()`` makes them, but
    /// written one after another into one buffer and returned as slices of
    /// it: a save of a channel's messages then costs one buffer, not one
    /// (and the copy into a `Data`) per message.
    ///
    /// - Throws: ``RecordEncodingError`` for the first message that cannot be encoded.
    static func serialize(_ messages: [ChatMessage]) throws(RecordEncodingError) -> [Data] {
        try messages.withUnsafeBufferPointer { buffer throws(RecordEncodingError) -> [Data] in
            var writer = BinaryWriter(capacity: buffer.reduce(0) { $0 + $1.estimatedSize })
            var ends = [Int]()
            ends.reserveCapacity(buffer.count)
            for index in buffer.indices {
                try buffer[index].write(to: &writer)
                ends.append(writer.count)
            }
            let bytes = writer.data
            var start = 0
            return ends.map { end in
                defer { start = end }
                return bytes[start..<end]
            }
        }
    }

    var estimatedSize: Int {
        44 + (requestID?.utf8.count ?? 0) + channelURL.utf8.count + text.utf8.count + customType.utf8.count + data.utf8.count
            + (sender.map { 8 + $0.userID.utf8.count + $0.nickname.utf8.count + $0.profileURL.utf8.count } ?? 0)
    }

    func write(to writer: inout BinaryWriter) throws(RecordEncodingError) {
        writer.write(requestID == nil ? Self.binaryVersion : Self.binaryVersionWithRequestID)
        writer.write(messageID)
        writer.write(createdAt)
        writer.write(updatedAt)
        writer.write(channelKind.byte)
        try writer.write(channelURL, field: "channelURL")
        try writer.write(text, field: "text")
        try writer.write(customType, field: "customType")
        try writer.write(data, field: "data")
        writer.write(sender != nil)
        if let sender {
            do throws(RecordEncodingError) {
                try sender.write(to: &writer)
            } catch {
                throw error.nested(in: "sender")
            }
        }
        if let requestID { try writer.write(requestID, field: "requestID") }
    }

    init(reading reader: inout BinaryReader) throws(RecordDecodingError) {
        let version = try reader.readVersion(in: Self.binaryVersion...Self.binaryVersionWithRequestID, of: "ChatMessage")
        messageID = try reader.readInt64()
        createdAt = try reader.readInt64()
        updatedAt = try reader.readInt64()
        channelKind = try ChatChannel.Kind(byte: try reader.readByte())
        channelURL = try reader.readString()
        text = try reader.readString()
        customType = try reader.readString()
        data = try reader.readString()
        sender = try reader.readBool() ? try ChatUser(reading: &reader) : nil
        requestID = version == Self.binaryVersionWithRequestID ? try reader.readString() : nil
    }
}
