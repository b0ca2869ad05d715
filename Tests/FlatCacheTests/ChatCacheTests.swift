import FlatCache
import Foundation
import Testing

@Suite struct ChatCacheTests {
    let folder: TemporaryFolder

    init() throws {
        folder = try TemporaryFolder()
    }

    // MARK: - Opening

    @Test func createsAMissingFolderAndMarksIt() throws {
        let directory = folder.appending("nested/chat cache")
        _ = try ChatCache(directory: directory)
        #expect(try String(contentsOf: directory.appendingPathComponent("format"), encoding: .utf8) == "flatcache 2\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == ["format", "records"])
    }

    @Test func reopensItsOwnFolder() throws {
        try ChatCache(directory: folder.url).users.blocking.save([Fixtures.mina])
        #expect(try ChatCache(directory: folder.url).users.blocking.load() == [Fixtures.mina])
    }

    @Test func refusesANewerFormat() throws {
        try Data("flatcache 3\n".utf8).write(to: folder.appending("format"))
        #expect {
            try ChatCache(directory: folder.url)
        } throws: { error in
            guard case FlatCacheError.unsupportedFormat(let marker, _) = error else { return false }
            return marker == "flatcache 3"
        }
    }

    @Test(arguments: ["", "flatcache\n", "flatcache 1", "flatcache 01\n", "something else\n"])
    func refusesAMarkerItDoesNotKnow(marker: String) throws {
        try Data(marker.utf8).write(to: folder.appending("format"))
        #expect(throws: FlatCacheError.self) { try ChatCache(directory: folder.url) }
    }

    @Test func refusesAFile() throws {
        let file = folder.appending("not-a-folder")
        try Data("x".utf8).write(to: file)
        #expect {
            try ChatCache(directory: file)
        } throws: { error in
            guard case FlatCacheError.notADirectory = error else { return false }
            return true
        }
    }

    @Test func refusesSomeoneElsesFolder() throws {
        try Data("my notes".utf8).write(to: folder.appending("notes.txt"))
        #expect {
            try ChatCache(directory: folder.url)
        } throws: { error in
            guard case FlatCacheError.notACacheDirectory = error else { return false }
            return true
        }
        #expect(!FileManager.default.fileExists(atPath: folder.appending("format").path))
    }

    @Test func acceptsAFolderWithOnlyHiddenFiles() throws {
        try Data().write(to: folder.appending(".DS_Store"))
        _ = try ChatCache(directory: folder.url)
    }

    @Test func aFolderWithOnlyItsOwnFilesGetsItsMarkerBack() throws {
        // Given a cache whose marker is gone (a crash between creating the folder and marking it)
        try ChatCache(directory: folder.url).users.blocking.save([Fixtures.mina])
        try FileManager.default.removeItem(at: folder.appending("format"))

        // Then it opens, with its data, and is marked again
        #expect(try ChatCache(directory: folder.url).users.blocking.load() == [Fixtures.mina])
        #expect(FileManager.default.fileExists(atPath: folder.appending("format").path))
    }

    @Test func survivesItsFolderBeingRemovedFromOutside() throws {
        // Given an open cache whose folder is deleted behind its back
        let directory = folder.appending("cache")
        let cache = try ChatCache(directory: directory)
        try cache.messages.blocking.save(Fixtures.messages(2))
        try FileManager.default.removeItem(at: directory)

        // When it is used again: a miss, then a save recreates the folder
        #expect(try cache.messages.blocking.load(in: Fixtures.channelURL) == [])
        try cache.messages.blocking.save(Fixtures.messages(3))

        // Then the app's next launch opens it normally
        #expect(try ChatCache(directory: directory).messages.blocking.load(in: Fixtures.channelURL) == Fixtures.messages(3))
    }

    @Test func opensThroughSymbolicLinksToFolders() throws {
        // Like /tmp -> /private/tmp on macOS: a link as the folder, and as an ancestor of a new folder
        let real = folder.appending("real")
        try FileManager.default.createDirectory(at: real, withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(at: folder.appending("link"), withDestinationURL: real)
        try ChatCache(directory: folder.appending("link")).users.blocking.save([Fixtures.mina])
        try ChatCache(directory: folder.appending("link/nested/cache")).users.blocking.save([Fixtures.mina])
        #expect(FileManager.default.fileExists(atPath: real.appendingPathComponent("users.lines").path))
        #expect(FileManager.default.fileExists(atPath: real.appendingPathComponent("nested/cache/users.lines").path))
    }

    @Test func aLinkedMessagesFolderIsNeverFollowedOut() throws {
        // Given a cache whose messages folder was replaced by a link to a folder outside it
        let cacheFolder = folder.appending("cache")
        let outside = folder.appending("outside")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: false)
        try ChatCache(directory: cacheFolder).messages.blocking.save(Fixtures.messages(2))
        try FileManager.default.removeItem(at: cacheFolder.appendingPathComponent("messages"))
        try FileManager.default.createSymbolicLink(at: cacheFolder.appendingPathComponent("messages"), withDestinationURL: outside)

        // When it is opened and used
        let cache = try ChatCache(directory: cacheFolder)
        try cache.messages.blocking.save(Fixtures.messages(3))

        // Then nothing was written through the link, and the cache works inside its folder
        #expect(try FileManager.default.contentsOfDirectory(atPath: outside.path) == [])
        #expect(try cache.messages.blocking.load(in: Fixtures.channelURL) == Fixtures.messages(3))
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: cacheFolder.appendingPathComponent("messages").path, isDirectory: &isDirectory))
        #expect(isDirectory.boolValue)
    }

    @Test func reportsAFolderThatCannotBeCreated() throws {
        // Tests run as root here, where permission bits stop nothing; a file in the path does.
        try Data("x".utf8).write(to: folder.appending("file"))
        #expect {
            try ChatCache(directory: folder.appending("file/cache"))
        } throws: { error in
            // It names the file that is in the way.
            guard case FlatCacheError.fileSystem(.createDirectory, let path, .ENOTDIR) = error else { return false }
            return path.hasSuffix("/file")
        }
    }

    @Test func reportsAWriteThatFails() throws {
        // Given a cache whose messages folder is blocked by a file
        let cache = try ChatCache(directory: folder.url)
        try Data("x".utf8).write(to: folder.appending("messages"))

        // Then a message save fails with a typed error naming the path, and other stores still work
        #expect {
            try cache.messages.blocking.save(Fixtures.messages(1))
        } throws: { error in
            guard case FlatCacheError.fileSystem(_, let path, _) = error else { return false }
            return path.contains("/messages")
        }
        try cache.users.blocking.save([Fixtures.mina])
    }

    @Test func rejectsAConfigurationOutOfRange() throws {
        #expect(throws: FlatCacheError.self) {
            try ChatCache(directory: folder.url, configuration: Configuration(maxMessagesPerChannel: 0))
        }
    }

    // MARK: - Durability

    @Test func synchronizedWritesGiveTheSameBytes() throws {
        let fast = try ChatCache(directory: folder.appending("fast"))
        let durable = try ChatCache(
            directory: folder.appending("durable"), configuration: Configuration(durability: .synchronized))
        for cache in [fast, durable] {
            try cache.messages.blocking.save(Fixtures.messages(3))
            try cache.users.blocking.save([Fixtures.mina])
        }
        #expect(try GoldenFolder.differences(between: folder.appending("fast"), and: folder.appending("durable")).isEmpty)
    }

    // MARK: - removeAll

    @Test func removeAllEmptiesTheCacheButKeepsItACache() throws {
        // Given a cache with everything in it, including a quarantined file
        let cache = try ChatCache(directory: folder.url, configuration: Configuration(logger: LogRecorder().logger))
        try cache.channels.blocking.replace(with: [Fixtures.channel("a", lastMessageAt: 1)])
        try cache.messages.blocking.save(Fixtures.messages(3, in: "a"))
        try cache.users.blocking.save([Fixtures.mina])
        try Data("garbage\n".utf8).write(to: folder.appending("users.lines"))
        _ = try cache.users.blocking.load()

        // When the user logs out
        try cache.blocking.removeAll()

        // Then only the marker and the record types are left, and the cache still works
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path).sorted() == ["format", "records"])
        try cache.users.blocking.save([Fixtures.mina])
        #expect(try cache.users.blocking.load() == [Fixtures.mina])
    }

    // MARK: - Errors read as sentences

    @Test func errorsSayWhatWentWrong() {
        #expect("\(FlatCacheError.emptyChannelURL)" == "A channel URL must not be empty.")
        #expect("\(FlatCacheError.fileSystem(.write, path: "/c/users.lines", code: .ENOSPC))"
            == "Could not write /c/users.lines: No space left on device.")
        #expect("\(FlatCacheError.invalidLimit(-3))" == "A page limit must be 0 or more, not -3.")
    }
}
