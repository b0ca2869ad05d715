import FlatCache
import FlatCacheSampleServer
import Foundation
import Testing

@Suite struct VerifyTests {
    let folder: TemporaryFolder
    let cache: ChatCache<ChatMessage, ChatChannel, ChatUser>
    let recorder = LogRecorder()

    init() throws {
        folder = try TemporaryFolder()
        let copy = folder.appending("cache")
        try FileManager.default.copyItem(at: GoldenFolder.url("sample-cache"), to: copy)
        cache = try ChatCache(directory: copy, configuration: Configuration(logger: recorder.logger))
    }

    var root: URL { folder.appending("cache") }

    @Test func aHealthyCacheVerifies() throws {
        let files = try cache.blocking.verify()
        #expect(files.count == 8)  // channels, users, 5 message files, records
        #expect(files.allSatisfy { $0.isValid })
        #expect(files.prefix(2).map(\.path) == ["channels.lines", "users.lines"])
        let records = files.map(\.records).reduce(0, +)
        #expect(records == 320)  // 5 channels, 10 users, 305 messages
    }

    @Test func verifyReportsABadFileAndMovesNothing() throws {
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("messages").path)
            .sorted().first { $0.hasSuffix(".lines") })
        let file = root.appendingPathComponent("messages").appendingPathComponent(name)
        var bytes = try Data(contentsOf: file)
        bytes[10] ^= 1
        try bytes.write(to: file)

        let bad = try cache.blocking.verify().filter { !$0.isValid }
        #expect(bad.map(\.path) == ["messages/\(name)"])
        #expect(bad.first?.problem?.contains("the sidecar says") == true)
        #expect(bad.first?.movedTo == nil)
        #expect(FileManager.default.fileExists(atPath: file.path))
        #expect(recorder.entries.isEmpty)
    }

    @Test func repairMovesBadFilesAsideLikeALoad() throws {
        try Data("junk\n".utf8).write(to: root.appendingPathComponent("users.lines"))
        var checked = [Int]()
        var totals = Set<Int>()
        let repaired = try cache.blocking.verify(repair: true) { done, total in
            checked.append(done)
            totals.insert(total)
        }
        #expect(totals == [8])
        let moved = try #require(repaired.first { !$0.isValid })
        #expect(moved.path == "users.lines")
        #expect(moved.movedTo?.hasPrefix("quarantine/") == true)
        #expect(checked == Array(1...8))
        #expect(recorder.entries.count == 1)
        let after = try cache.blocking.verify()
        #expect(after.allSatisfy { $0.isValid })  // the file is gone: nothing bad is left
        #expect(try cache.users.blocking.load() == [])
    }

    @Test func loadAllReturnsEveryChannelsMessages() throws {
        let server = try SampleServer()
        let expected = server.messages.filter { $0.messageID != 0 && $0.isInGroupChannel }
        let all = try cache.messages.blocking.loadAll()
        #expect(all.count == expected.count)
        #expect(Set(all) == Set(expected))
    }
}
