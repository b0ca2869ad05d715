import FlatCache
import Foundation
import Testing

/// An app's own types, with their own (non-JSON) serialization.
struct SDKMessage: MessageRecord, Equatable {
    var messageID: Int64
    var channelURL: String
    var createdAt: Int64
    var body: String

    struct Malformed: Error {}

    func serialize() throws -> Data {
        Data("\(messageID)|\(createdAt)|\(channelURL)|\(body)".utf8)
    }

    init(messageID: Int64, channelURL: String, createdAt: Int64, body: String) {
        (self.messageID, self.channelURL, self.createdAt, self.body) = (messageID, channelURL, createdAt, body)
    }

    init(serializedData: Data) throws {
        let parts = String(decoding: serializedData, as: UTF8.self).split(separator: "|", maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 4, let id = Int64(parts[0]), let time = Int64(parts[1]) else { throw Malformed() }
        self.init(messageID: id, channelURL: String(parts[2]), createdAt: time, body: String(parts[3]))
    }
}

struct SDKChannel: ChannelRecord, JSONCacheRecord, Equatable {
    var channelURL: String
    var isGroupChannel: Bool
    var lastMessageAt: Int64
}

struct SDKUser: UserRecord, JSONCacheRecord, Equatable {
    var userID: String
}

/// A record whose serialization fails, as an SDK object might.
struct UnserializableUser: UserRecord {
    var userID: String
    struct Refused: Error {}
    func serialize() throws -> Data { throw Refused() }
    init(userID: String) { self.userID = userID }
    init(serializedData: Data) throws { throw Refused() }
}

@Suite struct CustomRecordTests {
    let folder: TemporaryFolder

    init() throws {
        folder = try TemporaryFolder()
    }

    @Test func anAppCachesItsOwnTypes() throws {
        let cache = try ChatCache<SDKMessage, SDKChannel, SDKUser>(directory: folder.url)
        let message = SDKMessage(messageID: 5, channelURL: "c", createdAt: 10, body: "pipes | inside")
        try cache.messages.blocking.save([message])
        try cache.channels.blocking.save([SDKChannel(channelURL: "c", isGroupChannel: true, lastMessageAt: 10)])
        try cache.users.blocking.save([SDKUser(userID: "u")])
        #expect(try cache.messages.blocking.load(in: "c") == [message])
        #expect(try cache.channels.blocking.load().map(\.channelURL) == ["c"])
        #expect(try cache.users.blocking.load() == [SDKUser(userID: "u")])
        let line = try String(contentsOf: folder.appending("messages").appendingPathComponent(
            try #require(FileManager.default.contentsOfDirectory(atPath: folder.appending("messages").path).sorted().first)),
            encoding: .utf8)
        #expect(line == Data("5|10|c|pipes | inside".utf8).base64EncodedString() + "\n")
    }

    @Test func aSerializationFailureIsATypedErrorAndWritesNothing() throws {
        let cache = try ChatCache<SDKMessage, SDKChannel, UnserializableUser>(directory: folder.url)
        #expect {
            try cache.users.blocking.save([UnserializableUser(userID: "u")])
        } throws: { error in
            guard case FlatCacheError.serializationFailed(let type, let underlying) = error else { return false }
            return type == "UnserializableUser" && underlying is UnserializableUser.Refused
        }
        #expect(!FileManager.default.fileExists(atPath: folder.appending("users.lines").path))
    }
}
