@testable import FlatCache
import Foundation
import Testing

/// Random records, sealed and opened, come back equal, and an encrypted folder
/// of them verifies clean (issue 25). The seed is printed; set
/// `FLATCACHE_PROPERTY_SEED` to replay a run.
@Suite(.timeLimit(.minutes(2))) struct EncryptionPropertyTests {
    @Test func randomBytesSealedForAFileOpenOnlyForIt() throws {
        var generator = RecordPropertyTests.generator("randomBytesSealedForAFileOpenOnlyForIt")
        let sealer = try Sealer(.aes256gcm(key: Encryption.randomKey()))
        for round in 0..<200 {
            let count = Int.random(in: 0..<20, using: &generator.random)
            let records = (0..<count).map { _ in
                Data((0..<Int.random(in: 0..<600, using: &generator.random)).map { _ in UInt8.random(in: 0...255, using: &generator.random) })
            }
            let name = generator.key(round) + ".lines"
            let body = RecordLines.encode(records, sealer: sealer, fileName: name)

            #expect(body.count == RecordLines.encodedCount(of: records, sealed: true))
            #expect(try RecordLines.decode(body, sealer: sealer, fileName: name) == FileLines(records: records))
            if count > 0 {
                #expect(throws: Corruption.unsealable(line: 1)) {
                    try RecordLines.decode(body, sealer: sealer, fileName: name + "x")
                }
            }
        }
    }

    @Test func randomRecordsReadBackFromAnEncryptedFolderAndVerifyClean() throws {
        var generator = RecordPropertyTests.generator("randomRecordsReadBackFromAnEncryptedFolderAndVerifyClean")
        let folder = try TemporaryFolder()
        let channels = (0..<100).map { generator.channel(url: generator.key($0)) }
        let users = (0..<100).map { generator.user(id: generator.key($0)) }
        let channelURLs = (0..<6).map { generator.key($0) }
        let messages = (0..<300).map { generator.message(in: channelURLs[$0 % channelURLs.count]) }
        var configuration = Configuration(maxMessagesPerChannel: 1_000)
        configuration.encryption = .aes256gcm(key: Encryption.randomKey())

        let writer = try ChatCache(directory: folder.url, configuration: configuration)
        try writer.channels.blocking.save(channels)
        try writer.users.blocking.save(users)
        try writer.messages.blocking.save(messages)

        let reader = try ChatCache(directory: folder.url, configuration: configuration)
        #expect(try reader.channels.blocking.load() == RecordPropertyTests.expectedChannels(channels))
        #expect(try reader.users.blocking.load() == users.sorted { RecordPropertyTests.byteOrder($0.userID, $1.userID) })
        for url in channelURLs {
            #expect(try reader.messages.blocking.load(in: url) == RecordPropertyTests.expectedMessages(messages, in: url))
        }
        let verified = try reader.blocking.verify()
        #expect(verified.filter { !$0.isValid } == [])
        #expect(verified.filter { $0.path.hasPrefix("messages/") }.count == channelURLs.count)
    }
}
