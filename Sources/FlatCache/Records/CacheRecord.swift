public import Foundation

/// A value that turns itself into bytes and back: the shape chat SDK objects
/// already have (`serialize()` and `build(fromSerializedData:)`).
///
/// FlatCache stores each record's bytes as one Base64 line. The same value
/// must always serialize to the same bytes, so that saving unchanged content
/// is detected and skipped.
///
/// ```swift
/// struct Reaction: CacheRecord {
///     var emoji: String
///     func serialize() -> Data { Data(emoji.utf8) }
///     init(serializedData: Data) throws {
///         guard let emoji = String(data: serializedData, encoding: .utf8) else { throw CocoaError(.coderReadCorrupt) }
///         self.emoji = emoji
///     }
/// }
/// ```
///
/// A non-final class (an `NSObject` subclass, as chat SDKs write them)
/// conforms in its declaration, with a `required init(serializedData:)`, and
/// must be `Sendable`: `@unchecked Sendable` over immutable state. The DocC
/// article "Your own record types" shows one.
public protocol CacheRecord: Sendable {
    /// The record's bytes; equal records give equal bytes.
    ///
    /// - Throws: Any error; FlatCache reports it as ``FlatCacheError/serializationFailed(recordType:underlying:)``.
    func serialize() throws -> Data

    /// Rebuilds a record from bytes that ``serialize()`` produced.
    ///
    /// - Throws: Any error when the bytes do not make a record; a load then
    ///   treats the whole file as corrupt (a cache miss) and moves it aside.
    init(serializedData: Data) throws

    /// The name a cache folder records for this type, so that a folder written
    /// with other types is refused at open instead of read as corrupt.
    ///
    /// The default is the module-qualified type name (`String(reflecting:)`),
    /// such as `FlatCache.ChatMessage`. Give a fixed name to keep reading a
    /// folder after renaming the type or its module; give a new name when the
    /// bytes ``serialize()`` writes change incompatibly. One line of UTF-8,
    /// not empty, without a `\n`; opening a cache with a name that breaks
    /// this traps (a programmer error, caught by the first test that opens one).
    static var recordTypeName: String { get }
}

extension CacheRecord {
    /// The module-qualified type name, such as `MyApp.SDKMessage`.
    public static var recordTypeName: String { String(reflecting: Self.self) }
}

/// A chat message the message store can cache.
///
/// Its id may be of any type the server uses: `Int64` (the default, as
/// Sendbird's), `String` (as Matrix's event ids), or another `Hashable`,
/// `Comparable` type. Ids are compared with their own `==` and `<`.
public protocol MessageRecord: CacheRecord {
    /// The type of the server's message ids; `Int64` unless the record says otherwise.
    associatedtype MessageID: Hashable & Comparable & Sendable = Int64
    /// The server's id for the message, unique within its channel.
    var messageID: MessageID { get }
    /// Whether the server gave the message its id; a message not sent yet is
    /// never cached. The default is `messageID != 0` for `Int64` ids and
    /// `!messageID.isEmpty` for `String` ids; a record with ids of another
    /// type says itself.
    var isSent: Bool { get }
    /// The URL of the channel the message belongs to.
    var channelURL: String { get }
    /// When the message was created, in milliseconds since 1970.
    var createdAt: Int64 { get }
    /// Whether the message was sent in a group channel; messages of open
    /// channels are never cached, like the channels themselves.
    /// The default implementation returns `true`.
    var isInGroupChannel: Bool { get }
    /// The key the app's client made up when it sent the message (its
    /// idempotency key, Sendbird's `reqId`, Matrix's transaction id), as the
    /// server echoes it back on the sender's own messages; `nil` when unknown.
    /// The ``Outbox`` matches a server's copy to the entry it came from by
    /// it. The default implementation returns `nil`.
    var requestID: String? { get }
    /// The text search finds the message by (see ``MessageSearch``): what the
    /// user reads in it, such as its body, a caption or a file name; `nil`
    /// for a message search leaves out. The default implementation returns `nil`.
    var searchableText: String? { get }
    /// The id of the user who sent it, which ``SearchFilter/senderIDs`` matches;
    /// `nil` when unknown. The default implementation returns `nil`.
    var senderID: String? { get }
}

extension MessageRecord {
    /// `true`: a type that does not say is taken to be a group channel's message.
    public var isInGroupChannel: Bool { true }
    /// `nil`: a type that does not say carries no request id.
    public var requestID: String? { nil }
    /// `nil`: a type that does not say is not searched.
    public var searchableText: String? { nil }
    /// `nil`: a type that does not say names no sender.
    public var senderID: String? { nil }
}

extension MessageRecord where MessageID == Int64 {
    /// Whether the id is set: 0 means "not sent yet".
    public var isSent: Bool { messageID != 0 }
}

extension MessageRecord where MessageID == String {
    /// Whether the id is set: an empty id means "not sent yet".
    public var isSent: Bool { !messageID.isEmpty }
}

/// A chat channel the channel store can cache.
public protocol ChannelRecord: CacheRecord {
    /// The channel's URL, its unique key.
    var channelURL: String { get }
    /// Whether it is a group channel; only group channels are cached (open channels change too often).
    var isGroupChannel: Bool { get }
    /// When its last message was sent (or it was created, if it has none), in milliseconds since 1970.
    var lastMessageAt: Int64 { get }
}

/// A chat user the user store can cache.
public protocol UserRecord: CacheRecord {
    /// The user's unique id.
    var userID: String { get }
}
