/// A chat user, ready to cache: serialized as compact JSON with sorted keys.
///
/// ```swift
/// let user = ChatUser(userID: "mina", nickname: "Mina", profileURL: "https://example.com/mina.png")
/// try cache.users.save([user])
/// ```
public struct ChatUser: UserRecord, JSONCacheRecord, Hashable {
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
