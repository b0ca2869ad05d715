public import Foundation

/// A chat user, ready to cache in a compact binary form (see `docs/format.md`).
///
/// ```swift
/// let user = ChatUser(userID: "mina", nickname: "Mina", profileURL: "https://example.com/mina.png")
/// try await cache.users.save([user])
/// ```
public struct ChatUser: UserRecord, Codable, Hashable, Identifiable {
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
    ///
    /// ```swift
    /// let bytes = try ChatUser(userID: "ana", nickname: "Ana").serialize()
    /// // 01 03 61 6e 61 03 41 6e 61 00: version, "ana", "Ana", ""
    /// ```
    ///
    /// - Throws: ``RecordEncodingError`` when a string has more than 268,435,455
    ///   (2^28 - 1) UTF-8 bytes, the most the format holds; nothing is copied then.
    public func serialize() throws(RecordEncodingError) -> Data {
        var writer = BinaryWriter(capacity: 8 + userID.utf8.count + nickname.utf8.count + profileURL.utf8.count)
        try write(to: &writer)
        return writer.data
    }

    /// Decodes a user from bytes that ``serialize()`` produced.
    ///
    /// - Throws: ``RecordDecodingError`` for anything else.
    public init(serializedData: Data) throws(RecordDecodingError) {
        self = try BinaryReader.read(serializedData) { reader throws(RecordDecodingError) in try ChatUser(reading: &reader) }
    }

    func write(to writer: inout BinaryWriter) throws(RecordEncodingError) {
        writer.write(Self.binaryVersion)
        try writer.write(userID, field: "userID")
        try writer.write(nickname, field: "nickname")
        try writer.write(profileURL, field: "profileURL")
    }

    init(reading reader: inout BinaryReader) throws(RecordDecodingError) {
        try reader.readVersion(Self.binaryVersion, of: "ChatUser")
        userID = try reader.readString()
        nickname = try reader.readString()
        profileURL = try reader.readString()
    }
}
