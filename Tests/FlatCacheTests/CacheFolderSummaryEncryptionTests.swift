@testable import FlatCache
import Foundation
import Testing

/// ``CacheFolderSummary`` on an encrypted folder, without its key: the key id
/// it names, line counts, and a verify that checks every sidecar, the sealed
/// continuity and usage files included (issue 25).
@Suite(.timeLimit(.minutes(2))) struct CacheFolderSummaryEncryptionTests {
    typealias Cache = ChatCache<ChatMessage, ChatChannel, ChatUser>

    let folder: TemporaryFolder
    static let encryption = Encryption.aes256gcm(key: Data((0..<32).map { UInt8($0) }))

    init() throws {
        folder = try TemporaryFolder()
    }

    /// A cache with messages and their continuity, a channel list and its continuity, and usage.
    func fill(_ encryption: Encryption?) async throws {
        var configuration = Configuration(logger: LogRecorder().logger)
        configuration.encryption = encryption
        let cache = try Cache(directory: folder.url, configuration: configuration)
        try cache.messages.saveNow([ChatMessage(messageID: 1, channelURL: "alpha", createdAt: 1_000, text: "one")])
        try cache.channels.blocking.replace(with: [ChatChannel(channelURL: "alpha", kind: .group, name: "Alpha", memberCount: 1, createdAt: 0)])
        try await cache.messages.setChangeLogToken("token", in: "alpha")
        try await cache.channels.setChangeLogToken("token")
        try await cache.close()
    }

    @Test func theKeyIDIsReadWithoutTheKey() async throws {
        try await fill(Self.encryption)
        #expect(try CacheFolderSummary.keyID(directory: folder.url) == Self.encryption.keyID)
        let summary = try CacheFolderSummary.read(directory: folder.url)
        #expect(summary.keyID == Self.encryption.keyID)
        #expect(summary.files.map(\.records) == [1, 1])
    }

    @Test func aPlainFolderHasNoKeyID() async throws {
        try await fill(nil)
        #expect(try CacheFolderSummary.keyID(directory: folder.url) == nil)
        #expect(try CacheFolderSummary.read(directory: folder.url).keyID == nil)
    }

    @Test func verifyWithoutTheKeyPassesEveryFileOfAGoodFolder() async throws {
        try await fill(Self.encryption)
        let files = try CacheFolderSummary.verify(directory: folder.url)
        let paths = files.map(\.path)
        #expect(paths.contains("channels.continuity") && paths.contains("usage.lines"), "\(paths)")
        #expect(paths.contains { $0.hasSuffix(".continuity") && $0.hasPrefix("messages/") }, "\(paths)")
        #expect(files.filter { !$0.isValid }.map(\.path) == [])
    }

    @Test func theMessageFilePathOfAnEncryptedFolderIsItsKeyedName() async throws {
        try await fill(Self.encryption)
        let path = try CacheFolderSummary.messagesFilePath(forChannel: "alpha", encryption: Self.encryption)
        #expect(try CacheFolderSummary.read(directory: folder.url).files.map(\.path).contains(path))
        #expect(path != (try CacheFolderSummary.messagesFilePath(forChannel: "alpha")))
        #expect(throws: FlatCacheError.self) {
            try CacheFolderSummary.messagesFilePath(forChannel: "alpha", encryption: .aes256gcm(key: Data(count: 31)))
        }
    }
}
