import FlatCache
import FlatCacheSampleServer
import Foundation
import Testing

/// The sample data, saved through the public API, must give the checked-in
/// cache folder byte for byte; and that folder must load back as the sample
/// data, so format version 1 stays readable.
@Suite struct GoldenTests {
    let folder: TemporaryFolder
    let server: SampleServer

    init() throws {
        folder = try TemporaryFolder()
        server = try SampleServer()
    }

    /// What the sample server's data looks like once cached: group channels
    /// only, no unsent message, each list in its canonical order.
    var expectedChannels: [ChatChannel] {
        server.channels.filter(\.isGroupChannel).sorted { $0.lastMessageAt > $1.lastMessageAt }
    }

    func expectedMessages(in channelURL: String) -> [ChatMessage] {
        server.messages(in: channelURL).filter { $0.messageID != 0 }
            .sorted { ($0.createdAt, $0.messageID) < ($1.createdAt, $1.messageID) }
    }

    @Test func sampleDataSavesToTheGoldenFolderByteForByte() throws {
        // Given the sample server's data
        let cache = try ChatCache(directory: folder.url)

        // When it is cached through the public API
        let channels = try cache.channels.blocking.replace(with: server.channels)
        let messages = try cache.messages.blocking.save(server.messages)
        let users = try cache.users.blocking.save(server.users)

        // Then the rules left out the open channel, its 15 messages and the unsent one
        #expect(channels == SaveResult(filesWritten: 1, recordsLeftOut: 1))
        #expect(messages == SaveResult(filesWritten: 5, recordsLeftOut: 16))
        #expect(users == SaveResult(filesWritten: 1))
        // and the folder is the golden one, byte for byte
        try GoldenFolder.assertMatches(folder.url, golden: "sample-cache")
    }

    @Test func theGoldenFolderLoadsBackAsTheSampleData() throws {
        // Given a copy of the golden folder (loads must never touch the checked-in one)
        let copy = folder.appending("golden-copy")
        try FileManager.default.copyItem(at: GoldenFolder.url("sample-cache"), to: copy)
        let recorder = LogRecorder()

        // When it is opened and read
        let cache = try ChatCache(directory: copy, configuration: Configuration(logger: recorder.logger))

        // Then it holds exactly the sample data, and nothing was found corrupt
        #expect(try cache.channels.blocking.load() == expectedChannels)
        for channel in expectedChannels {
            #expect(try cache.messages.blocking.load(in: channel.channelURL) == expectedMessages(in: channel.channelURL))
        }
        #expect(try cache.users.blocking.load() == server.users.sorted { $0.userID.utf8.lexicographicallyPrecedes($1.userID.utf8) })
        #expect(recorder.entries.isEmpty)
        #expect(try GoldenFolder.differences(between: copy, and: GoldenFolder.url("sample-cache")).isEmpty)
    }

    @Test func theSampleDataExercisesEveryRule() throws {
        // The golden is only as good as its input: it must contain what the rules act on.
        #expect(server.channels.contains { !$0.isGroupChannel })
        #expect(server.messages.contains { $0.messageID == 0 })
        #expect(server.messages.contains { $0.text.unicodeScalars.contains { $0.value > 0xFFFF } })  // emoji
        #expect(server.messages.contains { $0.text.unicodeScalars.contains { (0x4E00...0x9FFF).contains($0.value) } })  // CJK
        #expect(server.messages.count > 300)
    }

    @Test func aSingleChangedByteIsReportedAsADifference() throws {
        // Given a copy of the golden folder with one byte changed in one message file
        let copy = folder.appending("tampered")
        try FileManager.default.copyItem(at: GoldenFolder.url("sample-cache"), to: copy)
        let messages = copy.appendingPathComponent("messages")
        let name = try #require(
            try FileManager.default.contentsOfDirectory(atPath: messages.path).sorted().first { $0.hasSuffix(".lines") })
        let file = messages.appendingPathComponent(name)
        var bytes = try Data(contentsOf: file)
        bytes[bytes.count / 2] ^= 0x01
        try bytes.write(to: file)

        // When the folders are compared, then exactly that file differs
        let differences = try GoldenFolder.differences(between: copy, and: GoldenFolder.url("sample-cache"))
        #expect(differences.count == 1)
        #expect(differences.first?.hasPrefix("messages/\(name) differs") == true)
    }
}
