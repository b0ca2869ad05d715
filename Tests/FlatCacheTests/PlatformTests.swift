import Foundation
import Testing

@testable import FlatCache
import FlatCacheTesting

/// The platform options and the Apple-facing parts: file protection and
/// backup exclusion (applied where the platform has them, accepted as
/// no-ops elsewhere), the default location of `ChatCache(name:)`, the
/// memory-warning trim, the privacy manifest, and no file lock held while
/// FlatCache's code is suspended (0xdead10cc).
@Suite struct PlatformTests {
    typealias Cache = ChatCache<ChatMessage, ChatChannel, ChatUser>

    let folder = try! TemporaryFolder()
    let channel = Fixtures.channelURL

    @Test func defaultsProtectUntilFirstUnlockAndExcludeFromBackup() {
        let configuration = Configuration()
        #expect(configuration.fileProtection == .completeUntilFirstUserAuthentication)
        #expect(configuration.isExcludedFromBackup)
    }

    @Test(arguments: [nil] + FileProtection.allCases.map(Optional.some), [true, false])
    func everyOptionOpensAWorkingCache(protection: FileProtection?, excluded: Bool) async throws {
        let configuration = Configuration(writeDelay: .zero, fileProtection: protection, isExcludedFromBackup: excluded)
        let cache = try await Cache.open(directory: folder.url, configuration: configuration)
        try await cache.messages.save(Fixtures.messages(3))
        try await cache.close()
        let reopened = try await Cache.open(directory: folder.url, configuration: configuration)
        #expect(try await reopened.messages.load(in: channel).map(\.messageID) == [1, 2, 3])

        #if canImport(Darwin)
        let values = try folder.url.resourceValues(forKeys: [.isExcludedFromBackupKey])
        #expect(values.isExcludedFromBackup == excluded)
        #endif
        #if (os(iOS) && !targetEnvironment(macCatalyst)) || os(tvOS) || os(watchOS) || os(visionOS)
        if let protection {
            // The folder, and a file made by a write after the open (through a temporary file and a rename).
            let messageFile = try #require(FileManager.default.subpaths(atPath: folder.url.path)?.first { $0.hasSuffix(".lines") })
            for path in [folder.url.path, folder.url.path + "/" + messageFile] {
                let attributes = try FileManager.default.attributesOfItem(atPath: path)
                #expect((attributes[.protectionKey] as? FileProtectionType)?.rawValue == protection.type.rawValue, "\(path)")
            }
        }
        #else
        #expect(!FileProtection.isApplied)
        #endif
    }

    @Test func changingTheProtectionClassKeepsTheData() throws {
        let first = try Cache(directory: folder.url, configuration: Configuration(writeDelay: .zero, fileProtection: .complete))
        try first.messages.blocking.save(Fixtures.messages(2))
        let second = try Cache(directory: folder.url, configuration: Configuration(fileProtection: .unprotected))
        #expect(try second.messages.blocking.load(in: channel).count == 2)
    }

    @Test func aNamedCacheLivesInFlatCacheUnderTheCachesFolder() throws {
        let expected = folder.url.appendingPathComponent("FlatCache/chat", isDirectory: true)
        let directory = try CachesDirectory.folder(named: "chat", in: folder.url)
        #expect(directory.standardizedFileURL.path == expected.standardizedFileURL.path)
        let cache = try Cache(opening: directory, configuration: Configuration())
        try cache.messages.blocking.save(Fixtures.messages(1))
        #expect(FileManager.default.fileExists(atPath: expected.appendingPathComponent("format").path))
    }

    @Test func theCachesFolderFollowsThePlatform() throws {
        #if canImport(Darwin)
        let caches = try #require(FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first)
        #expect(try CachesDirectory.user() == caches)
        #else
        #expect(try CachesDirectory.user(environment: ["XDG_CACHE_HOME": "/var/cache/me", "HOME": "/home/me"]).path == "/var/cache/me")
        // A relative XDG_CACHE_HOME is ignored, as the XDG Base Directory rule says.
        #expect(try CachesDirectory.user(environment: ["XDG_CACHE_HOME": "cache", "HOME": "/home/me"]).path == "/home/me/.cache")
        #expect(try CachesDirectory.user(environment: ["HOME": "/home/me"]).path == "/home/me/.cache")
        #endif
    }

    /// The one test of the real default location: a uniquely named cache in the user's caches folder, removed after.
    @Test func namedCachesOpenInTheUsersCachesFolder() async throws {
        let name = "flatcache-tests-\(UUID().uuidString)"
        let expected = try CachesDirectory.user().appendingPathComponent("FlatCache/" + name, isDirectory: true)
        defer {
            try? FileManager.default.removeItem(at: expected)
            _ = rmdir(expected.deletingLastPathComponent().path)   // FlatCache/, when no other cache is in it
        }
        let cache = try ChatCache(name: name)
        #expect(cache.directory.standardizedFileURL.path == expected.standardizedFileURL.path)
        try cache.messages.blocking.save(Fixtures.messages(1))
        let opened = try await ChatCache.open(name: name)
        #expect(opened.directory.standardizedFileURL.path == expected.standardizedFileURL.path)
        #expect(try await opened.messages.load(in: channel).count == 1)
    }

    @Test(arguments: ["", ".", "..", "a/b", "/", "chat/", "a\0b"])
    func aNameThatIsNotOneFolderNameIsRefused(name: String) async throws {
        #expect(throws: FlatCacheError.self) { try ChatCache(name: name) }
        do {
            _ = try await ChatCache.open(name: name)
            Issue.record("opened a cache named \(name.debugDescription)")
        } catch .invalidCacheName(let refused) {
            #expect(refused == name)
        } catch {
            Issue.record("threw \(error), not invalidCacheName")
        }
        let error = FlatCacheError.invalidCacheName(name)
        #expect(error.localizedDescription.contains("cannot name a cache folder"))
        #expect(error.recoverySuggestion != nil)
    }

    @Test func validNamesAreAccepted() throws {
        for name in ["chat", "user-42", ".hidden", "a b", "ü"] {
            #expect(try CachesDirectory.folder(named: name, in: folder.url).lastPathComponent == name)
        }
    }

    @Test func trimMemoryDropsTheMemoryTierButKeepsUnwrittenChanges() async throws {
        let other = "other-channel"
        let cache = try Cache(directory: folder.url, configuration: Configuration(writeDelay: .seconds(3600)))
        try cache.messages.blocking.save(Fixtures.messages(3, in: other))   // written, and kept in memory
        _ = try await cache.messages.load(in: other)
        try await cache.messages.save(Fixtures.messages(5))                 // waits for write-behind
        let before = try await cache.statistics()
        #expect(before.memoryEntries == 2)

        cache.trimMemory()

        let after = try await cache.statistics()
        #expect(after.memoryEntries == 1)
        #expect(after.memoryBytes > 0 && after.memoryBytes < before.memoryBytes)
        #expect(try await cache.messages.load(in: channel).count == 5)      // the unwritten change, from memory
        let misses = try await cache.statistics().memoryMisses
        #expect(try await cache.messages.load(in: other).count == 3)        // read from its file again
        #expect(try await cache.statistics().memoryMisses == misses + 1)

        // The change trimMemory kept is written by the flush and read by a new instance.
        try await cache.flush()
        let fresh = try Cache(directory: folder.url)
        #expect(try fresh.messages.blocking.load(in: channel).map(\.messageID) == [1, 2, 3, 4, 5])
    }

    @Test func thePrivacyManifestDeclaresFileTimestampsForReasonC6171() throws {
        let url = try #require(PrivacyManifest.url)
        let plist = try PropertyListSerialization.propertyList(from: Data(contentsOf: url), format: nil)
        let manifest = try #require(plist as? [String: Any])
        #expect(manifest["NSPrivacyTracking"] as? Bool == false)
        #expect((manifest["NSPrivacyCollectedDataTypes"] as? [Any])?.isEmpty == true)
        let types = try #require(manifest["NSPrivacyAccessedAPITypes"] as? [[String: Any]])
        let timestamps = try #require(types.first { $0["NSPrivacyAccessedAPIType"] as? String == "NSPrivacyAccessedAPICategoryFileTimestamp" })
        #expect(timestamps["NSPrivacyAccessedAPITypeReasons"] as? [String] == ["C617.1"])
    }

    // MARK: - No lock held while suspended (0xdead10cc)

    /// Whether another descriptor can take every lock byte of the folder's
    /// `format` file now (the cross-process locks of ``LockStripes``).
    func locksAreFree() throws -> Bool {
        let path = folder.url.appendingPathComponent("format").path
        let descriptor = open(path, O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(descriptor) }  // releases the probe's lock
        #if os(Linux)
        var request = flock()
        request.l_type = Int16(F_WRLCK)
        request.l_whence = Int16(SEEK_SET)
        request.l_start = 0
        request.l_len = 0  // to the end of the file and past it
        return fcntl(descriptor, 37 /* F_OFD_SETLK: try, do not wait */, &request) == 0
        #else
        return flock(descriptor, LOCK_EX | LOCK_NB) == 0
        #endif
    }

    // Both tests open without a size limit: the sweep a limit starts at open runs on the cache's
    // own thread and holds its lock for a moment, which a loaded machine lets the probe see.
    @Test func theLockProbeSeesALockHeldInsideTheCache() throws {
        let cache = try Cache(directory: folder.url, configuration: Configuration(sizeLimit: nil))
        let path = folder.url.appendingPathComponent("messages/x.lines").path
        let freeInside = try cache.storage.locks.withLock(for: path) { (try? locksAreFree()) ?? true }
        #expect(!freeInside)
        #expect(try locksAreFree())
    }

    @Test func noLockIsHeldWhileChangesWaitOrACollectionAwaitsItsSource() async throws {
        let cache = try await Cache.open(directory: folder.url, configuration: Configuration(writeDelay: .seconds(3600), sizeLimit: nil))
        try await cache.messages.save(Fixtures.messages(3))   // waiting for write-behind
        #expect(try locksAreFree())

        let server = SimulatedChatServer()
        await server.send(Fixtures.messages(10))
        let source = GatedSource(server: server)
        let collection = try MessageCollection(channelURL: channel, store: cache.messages, source: source)
        await source.hold()
        let starting = Task { try await collection.start() }
        // Bounded, and generous: under a loaded machine (the whole suite, ThreadSanitizer) start() may take seconds to ask.
        let deadline = ContinuousClock.now + .seconds(60)
        while !source.isWaiting, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        #expect(source.isWaiting)
        #expect(try locksAreFree())   // suspended in the middle of start(), holding nothing
        source.release()
        try await starting.value
        #expect(try locksAreFree())
        await collection.dispose()
    }
}
