import Foundation
import Testing

@testable import FlatCache

/// A clock tests move by hand: no test sleeps to make a channel old.
final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var date = Date(timeIntervalSince1970: 1_750_000_000)  // guarded by lock

    var cacheClock: CacheClock { CacheClock { self.lock.withLock { self.date } } }

    func advance(seconds: TimeInterval) {
        lock.withLock { date += seconds }
    }
}

/// Expiry, the size limit's sweep and statistics, with an injected clock and tiny limits.
@Suite struct PolicyTests {
    let folder = try! TemporaryFolder()
    let clock = TestClock()
    static let day: TimeInterval = 86_400

    func configuration(maxAge: Duration? = nil, sizeLimit: Int? = nil, sweepTarget: Double = 1) -> Configuration {
        Configuration(writeDelay: .zero, maxAge: maxAge, sizeLimit: sizeLimit, sweepTarget: sweepTarget, clock: clock.cacheClock)
    }

    static func url(_ index: Int) -> String { "channel-\(index)" }

    /// Five channels of 20 messages each (all files the same size), saved a minute apart, a channel list and users.
    func populate() async throws {
        let cache = try ChatCache(directory: folder.url, configuration: configuration())
        try await cache.channels.replace(with: (0..<5).map { Fixtures.channel(Self.url($0), lastMessageAt: 1) })
        try await cache.users.save([Fixtures.mina])
        for index in 0..<5 {
            try await cache.messages.replace(Fixtures.messages(20, in: Self.url(index)), in: Self.url(index))
            clock.advance(seconds: 60)
        }
        try await cache.close()
    }

    func messageFileBytes(_ index: Int) throws -> Int {
        let path = try CacheFolderSummary.messagesFilePath(forChannel: Self.url(index))
        let data = try FileManager.default.attributesOfItem(atPath: folder.appending(path).path)[.size] as! Int
        let sidecar = try FileManager.default.attributesOfItem(atPath: folder.appending(path + ".sha256").path)[.size] as! Int
        return data + sidecar
    }

    func hasMessageFile(_ index: Int) throws -> Bool {
        FileManager.default.fileExists(atPath: folder.appending(try CacheFolderSummary.messagesFilePath(forChannel: Self.url(index))).path)
    }

    // MARK: - Expiry

    @Test func anExpiredChannelLoadsAsAMissAndTheNextSweepRemovesIt() async throws {
        let cache = try ChatCache(directory: folder.url, configuration: configuration(maxAge: .seconds(Self.day)))
        try await cache.messages.replace(Fixtures.messages(3), in: Fixtures.channelURL)
        clock.advance(seconds: Self.day - 1)
        #expect(try await cache.messages.load(in: Fixtures.channelURL).count == 3)

        clock.advance(seconds: 2)
        #expect(try await cache.messages.loadIfCached(in: Fixtures.channelURL) == nil)
        #expect(try await cache.messages.loadLatest(in: Fixtures.channelURL, limit: 2).isEmpty)
        #expect(try await cache.messages.load(in: Fixtures.channelURL, before: 10_000, limit: 2).isEmpty)
        #expect(try await cache.messages.loadAll().isEmpty)
        let path = folder.appending(try CacheFolderSummary.messagesFilePath(forChannel: Fixtures.channelURL)).path
        #expect(FileManager.default.fileExists(atPath: path), "the file stays until a sweep")
        let swept = try await cache.sweep()
        #expect(swept.expiredChannels == 1)
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(try await cache.statistics().expirations == 1)
        #expect(try await cache.statistics().channelsWithMessages == 0)
    }

    @Test func aSaveKeepsAChannelFreshAndASaveIntoAnExpiredOneStartsAfresh() async throws {
        let cache = try ChatCache(directory: folder.url, configuration: configuration(maxAge: .seconds(Self.day)))
        try await cache.messages.replace(Fixtures.messages(3), in: Fixtures.channelURL)
        clock.advance(seconds: Self.day * 0.75)
        // An unchanged save counts as a save.
        try await cache.messages.replace(Fixtures.messages(3), in: Fixtures.channelURL)
        clock.advance(seconds: Self.day * 0.75)
        #expect(try await cache.messages.load(in: Fixtures.channelURL).count == 3)

        clock.advance(seconds: Self.day * 2)
        try await cache.messages.save([Fixtures.message(10, at: 10_000)])
        #expect(try await cache.messages.load(in: Fixtures.channelURL).map(\.messageID) == [10])
        try await cache.messages.applyChangeLog(updated: [], deletedMessageIDs: [10], in: Fixtures.channelURL)
        #expect(try await cache.messages.load(in: Fixtures.channelURL).isEmpty)
    }

    @Test func expiryHoldsAcrossInstancesThroughUsageLines() async throws {
        let writer = try ChatCache(directory: folder.url, configuration: configuration(maxAge: .seconds(Self.day)))
        try await writer.messages.replace(Fixtures.messages(3), in: Fixtures.channelURL)
        try await writer.close()
        #expect(FileManager.default.fileExists(atPath: folder.appending("usage.lines").path))

        clock.advance(seconds: Self.day + 1)
        let reader = try ChatCache(directory: folder.url, configuration: configuration(maxAge: .seconds(Self.day)))
        #expect(try await reader.messages.loadIfCached(in: Fixtures.channelURL) == nil)
        // The sweep at open (or this one, whichever comes first) removes it.
        _ = try await reader.sweep()
        let seen = try await reader.statistics()
        #expect(seen.expirations == 1, "\(seen)")
        #expect(try await reader.messages.loadIfCached(in: Fixtures.channelURL) == nil)
        #expect(try await reader.statistics().channelsWithMessages == 0)
    }

    @Test func usageLinesIsCheckedLikeEveryDataFileAndPinned() async throws {
        let cache = try ChatCache(directory: folder.url, configuration: configuration())
        try await cache.messages.replace(Fixtures.messages(2, in: "a"), in: "a")
        clock.advance(seconds: 1.5)
        _ = try await cache.messages.load(in: "a")
        try await cache.close()
        let lines = try String(contentsOf: folder.appending("usage.lines"), encoding: .utf8)
        let path = try CacheFolderSummary.messagesFilePath(forChannel: "a")
        let key = try #require(path.split(separator: "/").last?.dropLast(6))
        // Version 2, the key's 32 bytes, saved and used in milliseconds, then the message file as
        // that save left it: inode, size, modification time in nanoseconds; all little-endian.
        let stamp = try #require(try FileSystem.stamp(at: folder.appending(path).path))
        var record = Data([2])
        record += Data(SHA256Digest(hex: Array(key.utf8))!.bytes)
        for value in [
            Int64(1_750_000_000_000), 1_750_000_001_500, Int64(bitPattern: stamp.inode), Int64(stamp.size),
            Int64(stamp.modified.seconds) * 1_000_000_000 + Int64(stamp.modified.nanoseconds),
        ] {
            withUnsafeBytes(of: value.littleEndian) { record += Data($0) }
        }
        #expect(record.count == 73)
        #expect(lines == record.base64EncodedString() + "\n")
        let sidecar = try String(contentsOf: folder.appending("usage.lines.sha256"), encoding: .utf8)
        #expect(sidecar == SHA256Digest(of: Data(lines.utf8)).hex + "  usage.lines\n")
    }

    @Test func flushesWriteUsageLinesAtMostEveryFewSecondsAndCloseAlways() async throws {
        let cache = try ChatCache(directory: folder.url, configuration: configuration())
        let usage = folder.appending("usage.lines").path
        try await cache.messages.replace(Fixtures.messages(2, in: "a"), in: "a")
        let first = try #require(try FileSystem.stamp(at: usage))
        // Saves in quick succession: each replaces its message file, not usage.lines too.
        for round in 0..<3 {
            clock.advance(seconds: 1)
            try await cache.messages.save([Fixtures.message(Int64(10 + round), at: Int64(10_000 + round), in: "a")])
            try await cache.flush()
        }
        #expect(try FileSystem.stamp(at: usage) == first)
        // Five seconds (by the cache's clock) after the last write, a flush writes it.
        clock.advance(seconds: 2)
        try await cache.messages.save([Fixtures.message(20, at: 20_000, in: "a")])
        try await cache.flush()
        let second = try #require(try FileSystem.stamp(at: usage))
        #expect(second != first)
        var times = try ChannelUsage.read(cache.layout.usageFile, logger: LogRecorder().logger)
        #expect(times.values.map(\.saved) == [1_750_000_005_000])
        // close() writes it whatever its age.
        clock.advance(seconds: 1)
        try await cache.messages.save([Fixtures.message(21, at: 21_000, in: "a")])
        try await cache.close()
        times = try ChannelUsage.read(cache.layout.usageFile, logger: LogRecorder().logger)
        #expect(times.values.map(\.saved) == [1_750_000_006_000])
    }

    @Test func aDamagedUsageFileIsLoggedAndStartedAfresh() async throws {
        try await populate()
        try Data("not base64\n".utf8).write(to: folder.appending("usage.lines"))
        let recorder = LogRecorder()
        var configuration = configuration(maxAge: .seconds(Self.day))
        configuration.logger = recorder.logger
        let cache = try ChatCache(directory: folder.url, configuration: configuration)
        #expect(try await cache.messages.load(in: Self.url(0)).count == 20)
        #expect(recorder.entries.contains { $0.message.contains("usage.lines damaged") })
        try await cache.close()
        #expect(try ChannelUsage.read(cache.layout.usageFile, logger: recorder.logger).count == 1)
    }

    @Test func withoutExpiryOpeningAndLoadingLeaveUsageUnreadUntilAWrite() async throws {
        // Given a folder whose usage.lines is damaged, opened without maxAge
        try await populate()
        try Data("not base64\n".utf8).write(to: folder.appending("usage.lines"))
        let recorder = LogRecorder()
        var configuration = configuration()
        configuration.logger = recorder.logger

        // When it opens and loads, nothing reads the times (issue 32: an open of 1,000 channels read them all)
        let cache = try ChatCache(directory: folder.url, configuration: configuration)
        #expect(try await cache.messages.load(in: Self.url(0)).count == 20)
        #expect(!recorder.entries.contains { $0.message.contains("usage.lines damaged") }, "the open read usage.lines")

        // Then closing, which writes the times, reads the file first and starts it afresh
        try await cache.close()
        #expect(recorder.entries.contains { $0.message.contains("usage.lines damaged") })
        #expect(try ChannelUsage.read(cache.layout.usageFile, logger: recorder.logger).count == 1)
    }

    // MARK: - Size limit

    @Test func aSweepEvictsTheLeastRecentlyUsedChannelsDownToTheTarget() async throws {
        try await populate()
        // Channel 0, the oldest save, is loaded now: the most recent use.
        let user = try ChatCache(directory: folder.url, configuration: configuration())
        #expect(try await user.messages.load(in: Self.url(0)).count == 20)
        try await user.close()

        let total = try await user.statistics().diskBytes
        let channel = try messageFileBytes(1)
        // Room for everything but two and a half channels: channels 1, 2 and 3 must go, in that order.
        let limit = total - 1
        let target = total - channel * 5 / 2
        let cache = try ChatCache(
            directory: folder.url,
            configuration: configuration(sizeLimit: limit, sweepTarget: Double(target) / Double(limit)))
        _ = try await cache.sweep()  // after the sweep at open
        let statistics = try await cache.statistics()
        #expect(statistics.evictions == 3)
        #expect(try (0..<5).map(hasMessageFile) == [true, false, false, false, true])
        #expect(statistics.diskBytes <= target + 200)  // usage.lines rewritten after the sweep
        #expect(statistics.channels == 5 && statistics.users == 1)
        #expect(try await cache.messages.load(in: Self.url(0)).count == 20)
        #expect(try await cache.messages.load(in: Self.url(1)).isEmpty)
    }

    @Test func quarantineGoesFirstThenMessagesThenUsersAndTheChannelListLast() async throws {
        try await populate()
        let quarantine = folder.appending("quarantine/1-incident")
        try FileManager.default.createDirectory(at: quarantine, withIntermediateDirectories: true)
        try Data(count: 4_000).write(to: quarantine.appendingPathComponent("damaged.lines"))
        let total = try await ChatCache(directory: folder.url, configuration: configuration()).statistics().diskBytes

        // Just over: the quarantine alone is enough.
        var cache = try ChatCache(directory: folder.url, configuration: configuration(sizeLimit: total - 1_000))
        var swept = try await cache.sweep()
        var statistics = try await cache.statistics()
        #expect(statistics.quarantinedBytes == 0 && statistics.evictions == 0 && statistics.channelsWithMessages == 5)

        // Far under: every channel's messages, then the users, the channel list last.
        let messageBytes = try (0..<5).map(messageFileBytes).reduce(0, +)
        cache = try ChatCache(directory: folder.url, configuration: configuration(sizeLimit: total - 4_000 - messageBytes - 10))
        swept = try await cache.sweep()
        statistics = try await cache.statistics()
        #expect(statistics.evictions == 5 && statistics.users == 0 && statistics.channels == 5)
        _ = swept

        cache = try ChatCache(directory: folder.url, configuration: configuration(sizeLimit: 1))
        swept = try await cache.sweep()
        statistics = try await cache.statistics()
        #expect(statistics.channels == 0 && statistics.users == 0 && statistics.channelsWithMessages == 0)
        let left = try FileManager.default.contentsOfDirectory(atPath: folder.url.path).filter { !$0.hasPrefix(".") }.sorted()
        #expect(left.allSatisfy { ["format", "records", "usage.lines", "usage.lines.sha256", "messages", "quarantine"].contains($0) })
    }

    @Test func writesThatCrossTheLimitSweepByThemselves() async throws {
        let cache = try ChatCache(directory: folder.url, configuration: configuration(sizeLimit: 20_000, sweepTarget: 0.5))
        _ = try await cache.sweep()  // the scan at open is done
        for index in 0..<20 {
            try await cache.messages.replace(Fixtures.messages(20, in: Self.url(index)), in: Self.url(index))
            clock.advance(seconds: 1)
        }
        try await cache.flush()
        _ = try await cache.sweep()  // waits for the sweep the writes started (the queue is serial)
        let statistics = try await cache.statistics()
        #expect(statistics.evictions > 0)
        #expect(statistics.diskBytes <= 20_000)
        // The newest survive.
        #expect(try await cache.messages.load(in: Self.url(19)).count == 20)
    }

    @Test func aChannelAnotherInstanceWroteAfterUsageLinesIsKept() async throws {
        try await populate()
        // Another process rewrites channel 1 (the least recently used) without having written usage.lines yet.
        try await Task.sleep(for: .milliseconds(20))
        _ = try ChatCache(directory: folder.url, configuration: configuration()).messages.saveNow(
            [Fixtures.message(100, at: 100_000, in: Self.url(1))])
        let total = try await ChatCache(directory: folder.url, configuration: configuration()).statistics().diskBytes
        let cache = try ChatCache(directory: folder.url, configuration: configuration(sizeLimit: total - 1))
        _ = try await cache.sweep()
        #expect(try (0..<5).map(hasMessageFile) == [false, true, true, true, true])
    }

    @Test func twoProcessesSweepingAtOnceEvictOnce() async throws {
        try await populate()
        let total = try await ChatCache(directory: folder.url, configuration: configuration()).statistics().diskBytes
        let limit = try total - messageFileBytes(0) * 5 / 2  // three channels must go
        let processes = try (0..<2).map { _ in
            let process = Process()
            process.executableURL = ProcessTests.helper
            process.arguments = ["sweep", folder.url.path, "\(limit)"]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            return (process, output)
        }
        var evicted = 0
        for (process, output) in processes {
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
            evicted += Int(text.split(separator: " ").last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? -100
        }
        #expect(evicted == 3)
        #expect(try (0..<5).map(hasMessageFile).filter { $0 }.count == 2)
    }

    // MARK: - Statistics

    @Test func statisticsMatchWhatIsOnDiskAndCountTheTiers() async throws {
        try await populate()
        let cache = try ChatCache(directory: folder.url, configuration: configuration())
        _ = try await cache.messages.load(in: Self.url(0))  // a memory miss, a disk hit
        _ = try await cache.messages.load(in: Self.url(0))  // a memory hit
        _ = try await cache.messages.load(in: "never-cached")  // misses in both
        let statistics = try await cache.statistics()
        let summary = try CacheFolderSummary.read(directory: folder.url)
        #expect(statistics.channels == summary.files.first { $0.role == .channels }?.records)
        #expect(statistics.users == summary.files.first { $0.role == .users }?.records)
        #expect(statistics.messages == summary.files.filter { $0.role == .messages }.map(\.records).reduce(0, +))
        #expect(statistics.channelsWithMessages == 5)
        let files = try GoldenFolder.files(in: folder.url)
        #expect(statistics.diskFiles == files.count)
        #expect(statistics.diskBytes == files.map { try! Data(contentsOf: folder.appending($0)).count }.reduce(0, +))
        #expect(statistics.memoryHits == 1 && statistics.memoryMisses == 2)
        #expect(statistics.diskHits == 1 && statistics.diskMisses == 1)
        // Channel 0's records, and that "never-cached" has no file (a second load of it reads nothing).
        #expect(statistics.memoryEntries == 2 && statistics.memoryBytes > 0, "\(statistics)")
    }
}
