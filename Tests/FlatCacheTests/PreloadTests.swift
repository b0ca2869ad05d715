import Foundation
import Testing

@testable import FlatCache

/// Seeding a cache from a read-only bundle (`Configuration.preloadedBundle`).
@Suite struct PreloadTests {
    let folder = try! TemporaryFolder()
    var bundle: URL { folder.appending("bundle") }
    var cacheFolder: URL { folder.appending("cache") }
    static let channels = (0..<3).map { "bundle-channel-\($0)" }

    /// A bundle of three channels of 5 messages, the channel list and one user, made read-only.
    func makeBundle(extraChannel: Bool = false) throws {
        let cache = try ChatCache(directory: bundle, configuration: Configuration(sizeLimit: nil))
        let urls = Self.channels + (extraChannel ? ["bundle-channel-extra"] : [])
        _ = try cache.channels.replace(with: urls.enumerated().map { Fixtures.channel($1, lastMessageAt: Int64($0 + 1)) })
        for url in urls { _ = try cache.messages.replace(Fixtures.messages(5, in: url), in: url) }
        _ = try cache.users.save([Fixtures.mina])
        try setWritable(false)
    }

    func setWritable(_ writable: Bool) throws {
        for path in [bundle.path, bundle.path + "/messages"] {
            try FileManager.default.setAttributes([.posixPermissions: writable ? 0o755 : 0o555], ofItemAtPath: path)
        }
    }

    func open(_ recorder: DamageRecorder = DamageRecorder()) throws -> ChatCache<ChatMessage, ChatChannel, ChatUser> {
        var configuration = recorder.configuration()
        configuration.preloadedBundle = bundle
        return try ChatCache(directory: cacheFolder, configuration: configuration)
    }

    /// Every file of the bundle with its bytes, to show it never changes.
    func bundleContents() throws -> [String: Data] {
        var contents = [String: Data]()
        for path in try GoldenFolder.files(in: bundle) { contents[path] = try Data(contentsOf: bundle.appendingPathComponent(path)) }
        return contents
    }

    func messageFile(_ url: String, in root: URL) throws -> URL {
        root.appendingPathComponent(try CacheFolderSummary.messagesFilePath(forChannel: url))
    }

    @Test func anEmptyCacheIsSeededWithEverythingAndTheBundleStaysAsItWas() throws {
        try makeBundle()
        let before = try bundleContents()
        let cache = try open()
        #expect(cache.preload == PreloadResult(channelsSeeded: 3, seededChannelList: true, seededUsers: true))
        #expect(try cache.channels.load().map(\.channelURL) == Self.channels.reversed())
        for url in Self.channels { #expect(try cache.messages.loadNow(in: url) == Fixtures.messages(5, in: url)) }
        #expect(try cache.users.load() == [Fixtures.mina])
        #expect(try bundleContents() == before)
        // Each seeded file is the bundle's, byte for byte, sidecar included.
        for url in Self.channels {
            #expect(try Data(contentsOf: messageFile(url, in: cacheFolder)) == Data(contentsOf: messageFile(url, in: bundle)))
        }
        #expect(FileManager.default.fileExists(atPath: cacheFolder.appendingPathComponent("preloaded").path))
    }

    @Test func aLaterLaunchWithTheSameBundleChecksNothingAndBringsNothingBack() throws {
        try makeBundle()
        _ = try open()
        let cache = try open()
        #expect(cache.preload == PreloadResult(upToDate: true))
        // Dropped from the cache (evicted, expired, removed): the same bundle does not bring it back.
        try cache.messages.removeAll(in: Self.channels[0])
        #expect(try open().preload == PreloadResult(upToDate: true))
        #expect(try open().messages.loadIfCachedNow(in: Self.channels[0]) == nil)
        // removeAll forgets the bundle: the next open seeds everything again.
        try cache.removeAll()
        let again = try open()
        #expect(again.preload?.channelsSeeded == 3)
        #expect(try again.messages.loadIfCachedNow(in: Self.channels[0])?.count == 5)
    }

    @Test func aChannelTheCacheHasIsNeverReplacedByTheBundlesCopy() throws {
        try makeBundle()
        let newer = [Fixtures.message(9, at: 90_000, in: Self.channels[1], text: "newer than the bundle")]
        let user = ChatUser(userID: "kai", nickname: "Kai", profileURL: "")
        do {
            let cache = try ChatCache(directory: cacheFolder)
            _ = try cache.messages.replace(newer, in: Self.channels[1])
            _ = try cache.users.save([user])
        }
        let cache = try open()
        #expect(cache.preload == PreloadResult(channelsSeeded: 2, seededChannelList: true, alreadyCached: 2))
        #expect(try cache.messages.loadNow(in: Self.channels[1]) == newer)
        #expect(try cache.users.load() == [user])
        #expect(try cache.messages.loadNow(in: Self.channels[0]).count == 5)
    }

    @Test func aDamagedBundleFileIsSkippedReportedAndNeverCopied() throws {
        try makeBundle()
        try setWritable(true)
        let damaged = try messageFile(Self.channels[2], in: bundle)
        var bytes = try Data(contentsOf: damaged)
        bytes[bytes.count / 2] ^= 0x01
        try bytes.write(to: damaged)
        try setWritable(false)
        let before = try bundleContents()

        let recorder = DamageRecorder()
        let cache = try open(recorder)
        let preload = try #require(cache.preload)
        #expect(preload.channelsSeeded == 2)
        #expect(preload.damaged.map(\.path) == [damaged.path])
        #expect(recorder.files.map(\.path) == [damaged.path])
        #expect(recorder.files.first?.movedTo == nil)
        #expect(!FileManager.default.fileExists(atPath: try messageFile(Self.channels[2], in: cacheFolder).path))
        #expect(try cache.messages.loadIfCachedNow(in: Self.channels[2]) == nil)
        #expect(try bundleContents() == before)
        // Not remembered as seeded: the next launch looks again, reports it again, and copies only what is missing.
        let again = try open()
        #expect(again.preload == PreloadResult(alreadyCached: 4, damaged: preload.damaged))
    }

    @Test func aRecordThatDoesNotDecodeIsDamagedToo() throws {
        try makeBundle()
        try setWritable(true)
        let file = RecordFile(path: try messageFile(Self.channels[0], in: bundle).path)
        _ = try file.write([Data([0xFF, 0xFF])], synchronized: false)
        try setWritable(false)
        let cache = try open()
        #expect(cache.preload?.channelsSeeded == 2)
        #expect(cache.preload?.damaged.first?.problem.contains("record") == true)
    }

    @Test func aNewBundleSeedsWhatIsMissing() throws {
        try makeBundle()
        _ = try open()
        try setWritable(true)
        try FileManager.default.removeItem(at: bundle)
        try makeBundle(extraChannel: true)
        let cache = try open()
        #expect(cache.preload == PreloadResult(channelsSeeded: 1, alreadyCached: 5))
        #expect(try cache.messages.loadNow(in: "bundle-channel-extra").count == 5)
    }

    @Test func aBundleThatIsNotACacheOfTheseTypesIsRefused() throws {
        func isNotACache(_ error: any Error) -> Bool {
            guard case .notACacheDirectory(let directory)? = error as? FlatCacheError else { return false }
            return directory == bundle
        }
        #expect(performing: { _ = try open() }, throws: isNotACache)
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        try Data("hello".utf8).write(to: bundle.appendingPathComponent("notes.txt"))
        #expect(performing: { _ = try open() }, throws: isNotACache)
        try FileManager.default.removeItem(at: bundle)
        _ = try ChatCache<SDKMessage, SDKChannel, SDKUser>(directory: bundle)
        #expect {
            _ = try open()
        } throws: { error in
            guard case .recordTypeMismatch(let directory, _, _)? = error as? FlatCacheError else { return false }
            return directory == bundle
        }
    }

    @Test func aReadOnlyCacheSeedsNothing() throws {
        try makeBundle()
        _ = try ChatCache(directory: cacheFolder)
        var configuration = Configuration(readOnly: true)
        configuration.preloadedBundle = bundle
        let cache = try ChatCache(directory: cacheFolder, configuration: configuration)
        #expect(cache.preload == nil)
        #expect(try cache.channels.load().isEmpty)
    }
}
