import Foundation
import Testing

@testable import FlatCache

/// Expiry (`Configuration.maxAge`) with another writer on the folder: a
/// channel another instance saved after the clock passed the expiry time is
/// fresh, and a save into the channel never drops what that writer saved.
@Suite struct ExpiryOtherWriterTests {
    let folder = try! TemporaryFolder()
    let clock = TestClock()
    static let url = "trip"
    static let hour: TimeInterval = 3_600

    static func message(_ id: Int64) -> ChatMessage { Fixtures.message(id, at: id * 1_000, in: url) }

    func cache(maxAge: Duration? = .seconds(3_600)) throws -> ChatCache<ChatMessage, ChatChannel, ChatUser> {
        try ChatCache(directory: folder.url, configuration: Configuration(writeDelay: .zero, maxAge: maxAge, clock: clock.cacheClock))
    }

    @Test func aChannelAnotherInstanceSavedAfterItExpiredIsFreshAndASaveKeepsItsMessages() async throws {
        // Given A saved a channel and closed
        let first = try cache()
        try await first.messages.save([Self.message(1)])
        try await first.close()

        // When, two hours later (maxAge one hour), B sweeps (which writes usage.lines, so that its
        // flush does not write it again within 5 seconds), saves the channel and flushes
        clock.advance(seconds: 2 * Self.hour)
        let second = try cache()
        #expect(try await second.sweep().expiredChannels + (try await second.statistics().expirations) >= 1)
        try await second.messages.save([Self.message(2)])
        try await second.flush()

        // Then A sees B's save: the channel is fresh (not a miss)
        #expect(try await first.messages.loadIfCached(in: Self.url)?.map(\.messageID) == [2])
        // and A's save into it keeps what B saved
        try await first.messages.save([Self.message(3)])
        #expect(try cache(maxAge: nil).messages.loadNow(in: Self.url).map(\.messageID) == [2, 3])
        // and so does a sweep: nothing is removed
        #expect(try await first.sweep().expiredChannels == 0)
    }

    @Test func anotherWritersSaveStaysFreshAfterThisCacheWritesUsageLines() async throws {
        // Given A's save, then, past the expiry, B's save and flush (B's times not written: its flush is not due)
        let first = try cache()
        try await first.messages.save([Self.message(1)])
        try await first.close()
        clock.advance(seconds: 2 * Self.hour)
        let second = try cache()
        _ = try await second.sweep()
        try await second.messages.save([Self.message(2)])
        try await second.flush()

        // When A writes usage.lines (a save elsewhere, then close) without having looked at the channel,
        // and time moves on a little
        try await first.messages.save([Fixtures.message(9, at: 9_000, in: "elsewhere")])
        try await first.close()
        clock.advance(seconds: Self.hour / 2)

        // Then a third instance still finds the channel fresh: A counted B's write as a save when it wrote
        let third = try cache()
        #expect(try await third.messages.loadIfCached(in: Self.url)?.map(\.messageID) == [2])
        // and once maxAge has passed since then, the channel expires as usual
        clock.advance(seconds: Self.hour)
        #expect(try await third.messages.loadIfCached(in: Self.url) == nil)
    }

    @Test func aChannelNobodyWroteSinceItsSaveStillExpires() async throws {
        let first = try cache()
        try await first.messages.save([Self.message(1)])
        try await first.close()
        clock.advance(seconds: 2 * Self.hour)
        #expect(try await first.messages.loadIfCached(in: Self.url) == nil)
        #expect(try await cache().messages.loadIfCached(in: Self.url) == nil)
        // A save into it starts afresh: the expired message is not kept.
        try await first.messages.save([Self.message(2)])
        #expect(try cache(maxAge: nil).messages.loadNow(in: Self.url).map(\.messageID) == [2])
    }

    @Test func usageLinesOfVersion1AreStillRead() async throws {
        // Given a folder whose usage.lines was written before version 2 records: the channel saved two hours ago
        let writer = try cache(maxAge: nil)
        try writer.messages.saveNow([Self.message(1)])
        let key = try #require(try CacheFolderSummary.messagesFilePath(forChannel: Self.url).split(separator: "/").last?.dropLast(6))
        var record = Data([1])
        record += Data(try #require(SHA256Digest(hex: Array(key.utf8))).bytes)
        let saved = Int64(clock.cacheClock.milliseconds)
        for value in [saved, saved] { withUnsafeBytes(of: value.littleEndian) { record += Data($0) } }
        let lines = Data((record.base64EncodedString() + "\n").utf8)
        try lines.write(to: folder.appending("usage.lines"))
        try Data((SHA256Digest(of: lines).hex + "  usage.lines\n").utf8).write(to: folder.appending("usage.lines.sha256"))
        #expect(ChannelUsage.decode(record)?.1 == ChannelUsage.Times(saved: saved, used: saved))

        // Then its time counts
        clock.advance(seconds: 2 * Self.hour)
        #expect(try await cache().messages.loadIfCached(in: Self.url) == nil)
    }
}
