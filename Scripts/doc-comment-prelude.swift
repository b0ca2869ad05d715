// The names that the examples in FlatCache's `///` doc comments assume.
// Scripts/check-docs builds this file as a module that every doc-comment
// snippet imports; a snippet that declares one of these names itself shadows
// it. Add a name here when an example needs one. Doc-comment snippets are
// compiled, never run.
public import FlatCache
public import FlatCacheTesting
public import Foundation

public let folder = FileManager.default.temporaryDirectory.appendingPathComponent("chat")
public let cachesFolder = FileManager.default.temporaryDirectory
public let channelURL = "sendbird_group_channel_1"
public let urls = [channelURL]

public let cache: ChatCache<ChatMessage, ChatChannel, ChatUser> = {
    do { return try ChatCache(directory: folder) } catch { fatalError("\(error)") }
}()

public let fetched: [ChatMessage] = []
public let fresh: [String: [ChatMessage]] = [:]
public let fetchedChannels: [ChatChannel] = []
public let changedChannel = ChatChannel(channelURL: channelURL, kind: .group, name: "Hiking", memberCount: 4, createdAt: 0)
public let members: [ChatUser] = []

/// A chat server's API, as an app would call it.
public struct ChatAPI: Sendable {
    public func fetchMessages(_ channelURL: String) async throws -> [ChatMessage] { [] }
    public func fetchUsers(_ userIDs: [String]) async throws -> [ChatUser] { [] }
}
public let api = ChatAPI()

/// The chat server an app's sources talk to (the simulated one, in examples).
public let server = SimulatedChatServer()

/// A Matrix homeserver and an account on it, for the FlatCacheMatrix examples.
public let homeserver = URL(string: "https://matrix.example.org")!
public let password = "correct horse battery staple"
public let accessToken = "syt_example"
public let roomID = "!trip:example.org"

public func showDiskFullBanner(_ path: String) {}

/// An app's own record types, for examples that name them.
public struct SDKMessage: MessageRecord, JSONCacheRecord {
    public var messageID: Int64
    public var channelURL: String
    public var createdAt: Int64
}
public struct SDKChannel: ChannelRecord, JSONCacheRecord {
    public var channelURL: String
    public var isGroupChannel: Bool
    public var lastMessageAt: Int64
}
public struct SDKUser: UserRecord, JSONCacheRecord {
    public var userID: String
}

/// What a chat screen does with what it loaded.
public func show<Records>(_ records: Records) {}
public func showSpinner() {}

/// A configuration to change, as an app does before opening its cache.
nonisolated(unsafe) public var configuration = Configuration()

/// An app's analytics client.
public struct Analytics: Sendable {
    public func record<Value>(_ event: String, _ properties: [String: Value]) {}
}
public let analytics = Analytics()

/// Converting the built-in records, as a migration does.
extension SDKMessage {
    public init(_ message: ChatMessage) {
        self.init(messageID: message.messageID, channelURL: message.channelURL, createdAt: message.createdAt)
    }
}
extension SDKChannel {
    public init(_ channel: ChatChannel) {
        self.init(channelURL: channel.channelURL, isGroupChannel: channel.isGroupChannel, lastMessageAt: channel.lastMessageAt)
    }
}
extension SDKUser {
    public init(_ user: ChatUser) { self.init(userID: user.userID) }
}

/// A message whose text the built-in binary form cannot hold (2^28 bytes).
public let hugeMessage = ChatMessage(
    messageID: 1, channelURL: channelURL, createdAt: 0, text: String(repeating: "a", count: 1 << 28))

/// The key an encrypted cache is opened with, and where an app keeps it.
public let key = Encryption.randomKey()
public struct Keychain: Sendable {
    public func store(_ key: Data, as name: String) throws {}
}
public let keychain = Keychain()
