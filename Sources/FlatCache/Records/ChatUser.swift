public import Foundation

/// A chat user, ready to cache in a compact binary form (see `docs/format.md`).
///
/// ```swift
/// let user = ChatUser(userID: "mina", nickname: "Mina", profileURL: "https://example.com/mina.png")
/// try cache.users.save([user])
/// ```
public struct ChatUser: UserRecord, Codable, Hashable {
    /// The user's unique id.
    public var userID: String
    /// The name shown in the app.
    public var nickname: String
    /// The URL of the profile picture; empty when there is none.
    public var profileURL: String

    /// A user with the given fields.
    public init(userID: String, nickname: String, profileURL: String = "") {
        self.userID = userID
        self.nickname = nickname
        self.profileURL = profileURL
    }
}

extension ChatUser {
    /// The record format version ``serialize()`` writes.
    static let binaryVersion: UInt8 = 1

    /// The user's bytes: a version byte, then `userID`, `nickname`, `profileURL`.
    public func serialize() -> Data {
        var writer = BinaryWriter(capacity: 8 + userID.utf8.count + nickname.utf8.count + profileURL.utf8.count)
        write(to: &writer)
        return writer.data
    }

    /// Decodes a user from bytes that ``serialize()`` produced.
    ///
    /// - Throws: ``RecordDecodingError`` for anything else.
    public init(serializedData: Data) throws(RecordDecodingError) {
        self = try BinaryReader.read(serializedData) { reader throws(RecordDecodingError) in try ChatUser(reading: &reader) }
    }

    func write(to writer: inout BinaryWriter) {
        writer.write(Self.binaryVersion)
        writer.write(userID)
        writer.write(nickname)
        writer.write(profileURL)
    }

    init(reading reader: inout BinaryReader) throws(RecordDecodingError) {
        try reader.readVersion(Self.binaryVersion, of: "ChatUser")
        userID = try reader.readString()
        nickname = try reader.readString()
        profileURL = try reader.readString()
    }
}
