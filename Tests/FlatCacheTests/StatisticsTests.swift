import Foundation
import Testing

@testable import FlatCache

/// What `statistics()` counts while write-behind holds saves not yet written.
@Suite struct StatisticsTests {
    let folder = try! TemporaryFolder()

    @Test func memoryBytesCountSavesWaitingForWriteBehind() async throws {
        // Given a cache whose writes wait a minute, and messages saved into channels never read
        let cache = try ChatCache(directory: folder.url, configuration: Configuration(writeDelay: .seconds(60), sizeLimit: nil))
        let (channels, perChannel) = (20, 30)
        for channel in 0..<channels {
            let url = "channel-\(channel)"
            try await cache.messages.save((1...perChannel).map {
                ChatMessage(messageID: Int64($0), channelURL: url, createdAt: Int64($0), text: String(repeating: "x", count: 100))
            })
        }

        // When the statistics are read before anything is written
        let waiting = try await cache.statistics()

        // Then memory counts the waiting records: at least their text
        #expect(waiting.memoryBytes >= channels * perChannel * 100, "\(waiting)")
        #expect(waiting.memoryEntries == channels)
        try await cache.flush()
        #expect(try await cache.statistics().messages == channels * perChannel)
    }
}
