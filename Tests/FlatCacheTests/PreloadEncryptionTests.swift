import Foundation
import Testing

@testable import FlatCache

/// An encrypted cache seeded from a preloaded bundle: a plain bundle's
/// records are sealed and their files named under the cache's key; a bundle
/// encrypted with the cache's key is taken as it is; one of another key is refused.
@Suite struct PreloadEncryptionTests {
    let folder = try! TemporaryFolder()
    var bundle: URL { folder.appending("bundle") }
    var cacheFolder: URL { folder.appending("cache") }
    static let channels = ["seeded-alpha", "seeded-beta"]

    func makeBundle(key: Data?) throws {
        var configuration = Configuration(sizeLimit: nil)
        configuration.encryption = key.map { .aes256gcm(key: $0) }
        let cache = try ChatCache(directory: bundle, configuration: configuration)
        try cache.channels.blocking.replace(with: Self.channels.map { Fixtures.channel($0, lastMessageAt: 1) })
        for url in Self.channels { try cache.messages.replaceNow(Fixtures.messages(3, in: url), in: url) }
        try cache.users.saveNow([Fixtures.mina])
    }

    func open(key: Data) throws(FlatCacheError) -> ChatCache<ChatMessage, ChatChannel, ChatUser> {
        var configuration = Configuration(logger: LogRecorder().logger)
        configuration.preloadedBundle = bundle
        configuration.encryption = .aes256gcm(key: key)
        return try ChatCache(directory: cacheFolder, configuration: configuration)
    }

    func expectSeeded(_ cache: ChatCache<ChatMessage, ChatChannel, ChatUser>) throws {
        #expect(cache.preload == PreloadResult(channelsSeeded: 2, seededChannelList: true, seededUsers: true))
        for url in Self.channels {
            #expect(try cache.messages.loadNow(in: url) == Fixtures.messages(3, in: url))
            let name = try cache.layout.messagesFile(forChannel: url).name
            #expect(FileManager.default.fileExists(atPath: cacheFolder.appendingPathComponent("messages/" + name).path))
        }
        #expect(try cache.users.loadNow() == [Fixtures.mina])
        #expect(try cache.blocking.verify().filter { !$0.isValid } == [])
    }

    @Test func aPlainBundleIsSealedIntoAnEncryptedCache() throws {
        try makeBundle(key: nil)
        let cache = try open(key: EncryptionTests.key)
        try expectSeeded(cache)
        // No file of the bundle was copied as it is: every one is sealed now.
        let text = try Data(contentsOf: cacheFolder.appendingPathComponent("users.lines"))
        #expect(Data(base64Encoded: Data(text.dropLast()))?.range(of: Data("Mina".utf8)) == nil)
        let plainNames = Set(try FileManager.default.contentsOfDirectory(atPath: bundle.appendingPathComponent("messages").path))
        let names = Set(try FileManager.default.contentsOfDirectory(atPath: cacheFolder.appendingPathComponent("messages").path))
        #expect(names.isDisjoint(with: plainNames))
    }

    @Test func aBundleOfTheCachesKeyIsTaken() throws {
        try makeBundle(key: EncryptionTests.key)
        try expectSeeded(try open(key: EncryptionTests.key))
    }

    @Test func aBundleOfAnotherKeyIsRefused() throws {
        try makeBundle(key: EncryptionTests.otherKey)
        do {
            _ = try open(key: EncryptionTests.key)
            Issue.record("a bundle of another key was taken")
        } catch {
            guard case .wrongEncryptionKey = error else { throw error }
        }
    }
}
