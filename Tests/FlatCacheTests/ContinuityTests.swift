@testable import FlatCache
import Foundation
import Testing

/// A channel's continuity (`messages/<key>.continuity`): the time ranges the
/// cache holds completely and the change log token, against real files. It
/// is pinned by a golden, read as "nothing known" when missing or damaged,
/// clipped when retention dropped messages, and goes with the messages it
/// describes.
@Suite struct ContinuityTests {
    let folder: TemporaryFolder
    let clock = TestClock()
    let url = Fixtures.channelURL
    static let start = ChannelContinuity.channelStart

    init() throws {
        folder = try TemporaryFolder()
    }

    // MARK: - Files

    static func key(_ channelURL: String) -> String {
        SHA256Digest(of: Data(channelURL.utf8)).hex
    }

    /// `messages/<key>.continuity` of `channelURL`, relative to the cache folder.
    static func continuityPath(_ channelURL: String) -> String {
        "messages/" + key(channelURL) + ".continuity"
    }

    func continuityFile(_ channelURL: String, in directory: URL? = nil) -> URL {
        (directory ?? folder.url).appendingPathComponent(Self.continuityPath(channelURL))
    }

    func messagesFile(_ channelURL: String, in directory: URL? = nil) -> URL {
        (directory ?? folder.url).appendingPathComponent("messages/" + Self.key(channelURL) + ".lines")
    }

    func exists(_ file: URL) -> Bool {
        FileManager.default.fileExists(atPath: file.path)
    }

    /// A continuity file and its sidecar are both there, or both gone.
    func expectContinuityFile(
        of channelURL: String, exists expected: Bool, in directory: URL? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let file = continuityFile(channelURL, in: directory)
        #expect(exists(file) == expected, "\(file.lastPathComponent)", sourceLocation: sourceLocation)
        #expect(exists(file.appendingPathExtension("sha256")) == expected, "its sidecar", sourceLocation: sourceLocation)
    }

    /// Writes `contents` as the continuity file of `channelURL`, with a sidecar that matches it.
    func writeContinuity(_ contents: Data, for channelURL: String) throws {
        let file = continuityFile(channelURL)
        try contents.write(to: file)
        let sidecar = SHA256Digest(of: contents).hex + "  " + file.lastPathComponent + "\n"
        try Data(sidecar.utf8).write(to: file.appendingPathExtension("sha256"))
    }

    // MARK: - Records by hand

    static func int64(_ value: Int64) -> [UInt8] {
        withUnsafeBytes(of: value.littleEndian) { Array($0) }
    }

    /// The first 8 bytes of the SHA256 of `text`, read as a little-endian integer.
    static func idDigest(_ text: String) -> Int64 {
        let bytes = SHA256Digest(of: Data(text.utf8)).bytes.prefix(8)
        return bytes.withUnsafeBytes { $0.loadUnaligned(as: Int64.self) }.littleEndian
    }

    /// A continuity record's bytes, field by field as `docs/format.md` lists them.
    static func record(
        version: UInt8 = 1, flags: UInt8, anchorAt: Int64 = 0, anchorID: Int64 = 0, token: [UInt8] = [],
        count: Int64? = nil, ranges: [(Int64, Int64)] = [], trailing: [UInt8] = []
    ) -> Data {
        var bytes: [UInt8] = [version, flags] + int64(anchorAt) + int64(anchorID)
        precondition(token.count < 128, "one LEB128 byte")
        bytes += [UInt8(token.count)] + token
        bytes += int64(count ?? Int64(ranges.count))
        for (lower, upper) in ranges { bytes += int64(lower) + int64(upper) }
        return Data(bytes + trailing)
    }

    /// A data file of one Base64 line holding `record`.
    static func line(_ record: Data) -> Data {
        Data((record.base64EncodedString() + "\n").utf8)
    }

    // MARK: - The golden

    static func plans(_ id: Int64, at createdAt: Int64) -> ChatMessage {
        Fixtures.message(id, at: createdAt, in: "plans")
    }

    /// The golden `continuity`: `plans` complete from its first message to
    /// 1700000060000 and from 1700000200000 to 1700000400000 (a hole between),
    /// with a change log token; `quiet` cached as empty, complete for a
    /// range, with no token.
    func saveContinuityExample(into directory: URL) throws {
        let cache = try ChatCache(directory: directory, configuration: Configuration(clock: clock.cacheClock))
        try cache.messages.replace(
            [Self.plans(2, at: 1_700_000_060_000), Self.plans(1, at: 1_700_000_000_000)], in: "plans",
            covering: Self.start...1_700_000_060_000)
        try cache.messages.replace(
            [Self.plans(4, at: 1_700_000_300_000)], in: "plans", covering: 1_700_000_200_000...1_700_000_400_000)
        try cache.messages.setChangeLogToken("changes-7", in: "plans")
        try cache.messages.replace([], in: "quiet", covering: 1_700_000_000_000...1_700_000_999_999)
    }

    static let plansContinuity = ChannelContinuity(
        completeRanges: [start...1_700_000_060_000, 1_700_000_200_000...1_700_000_400_000], changeLogToken: "changes-7")
    static let quietContinuity = ChannelContinuity(completeRanges: [1_700_000_000_000...1_700_000_999_999])

    @Test func theContinuityExampleIsPinnedByAGolden() throws {
        try saveContinuityExample(into: folder.url)
        try GoldenFolder.assertMatches(folder.url, golden: "continuity")
    }

    @Test func theGoldenContinuityLoadsBack() throws {
        // Given a copy of the golden folder
        let copy = folder.appending("golden-copy")
        try FileManager.default.copyItem(at: GoldenFolder.url("continuity"), to: copy)
        let recorder = DamageRecorder()

        // When it is opened and read
        let cache = try ChatCache(directory: copy, configuration: recorder.configuration())

        // Then the continuity and the messages are those saved, nothing was damaged, nothing changed
        #expect(try cache.messages.continuity(in: "plans") == Self.plansContinuity)
        #expect(try cache.messages.continuity(in: "quiet") == Self.quietContinuity)
        #expect(try cache.messages.load(in: "plans").map(\.messageID) == [1, 2, 4])
        #expect(try cache.messages.loadIfCached(in: "quiet") == [])
        #expect(try cache.messages.continuity(in: "plans").completeRange(containing: 1_700_000_100_000) == nil)
        #expect(recorder.files.isEmpty)
        #expect(try GoldenFolder.differences(between: copy, and: GoldenFolder.url("continuity")).isEmpty)
    }

    @Test func theGoldenRecordsAreTheBytesTheFormatDocumentDescribes() throws {
        // `plans`: version, flags 3 (anchor and token), message 1's time and id digest, the token, two ranges.
        let plans = Self.record(
            flags: 3, anchorAt: 1_700_000_000_000, anchorID: Self.idDigest("1"), token: Array("changes-7".utf8),
            ranges: [(Int64.min, 1_700_000_060_000), (1_700_000_200_000, 1_700_000_400_000)])
        // `quiet`: no anchor (no message), no token, zeros and an empty string in their place.
        let quiet = Self.record(flags: 0, ranges: [(1_700_000_000_000, 1_700_000_999_999)])
        let golden = GoldenFolder.url("continuity")
        for (channel, record) in [("plans", plans), ("quiet", quiet)] {
            let file = continuityFile(channel, in: golden)
            let bytes = try Data(contentsOf: file)
            #expect(bytes == Self.line(record), "\(channel)")
            let sidecar = try String(contentsOf: file.appendingPathExtension("sha256"), encoding: .utf8)
            #expect(sidecar == SHA256Digest(of: bytes).hex + "  " + Self.key(channel) + ".continuity\n")
        }
        // The anchor's id digest is the digest's first 8 bytes in their order on disk.
        let anchor = Data(plans[10..<18])
        #expect(anchor == Data(SHA256Digest(of: Data("1".utf8)).bytes.prefix(8)))
    }

    @Test func theFormatDocumentShowsTheGoldenContinuityFile() throws {
        let document = try String(contentsOf: FormatDocumentTests.document, encoding: .utf8)
        let file = continuityFile("plans", in: GoldenFolder.url("continuity"))
        for path in [file, file.appendingPathExtension("sha256")] {
            let text = try String(contentsOf: path, encoding: .utf8)
            for line in text.split(separator: "\n") {
                #expect(document.contains(line), "docs/format.md lacks this line of \(path.lastPathComponent): \(line)")
            }
        }
    }

    @Test(arguments: ["sample-cache", "worked-example"])
    func existingGoldenFoldersReadWithNothingKnown(golden: String) throws {
        // Given a copy of a golden folder written before continuity files
        let copy = folder.appending(golden)
        try FileManager.default.copyItem(at: GoldenFolder.url(golden), to: copy)
        let recorder = DamageRecorder()
        let cache = try ChatCache(directory: copy, configuration: recorder.configuration())
        let channels = try cache.channels.load()
        #expect(!channels.isEmpty)

        // When each channel's continuity is read, then nothing is known, nothing is reported, nothing is written
        for channel in channels {
            #expect(try cache.messages.continuity(in: channel.channelURL) == ChannelContinuity())
        }
        #expect(recorder.files.isEmpty)
        #expect(try GoldenFolder.differences(between: copy, and: GoldenFolder.url(golden)).isEmpty)
    }

    // MARK: - ChannelContinuity

    @Test func rangesThatOverlapOrTouchMergeAndAGapKeepsThemApart() {
        var continuity = ChannelContinuity(completeRanges: [50...60, 1...10, 11...20, 15...30])
        #expect(continuity.completeRanges == [1...30, 50...60])

        // One whole millisecond between them: apart.
        continuity.insert(32...40)
        #expect(continuity.completeRanges == [1...30, 32...40, 50...60])
        // Touching on both sides: one range.
        continuity.insert(31...31)
        #expect(continuity.completeRanges == [1...40, 50...60])
        // Inside one: nothing changes. Bridging: one range.
        continuity.insert(2...3)
        #expect(continuity.completeRanges == [1...40, 50...60])
        continuity.insert(35...55)
        #expect(continuity.completeRanges == [1...60])
        #expect(continuity.completeRange(containing: 60) == 1...60)
        #expect(continuity.completeRange(containing: 61) == nil)
        #expect(continuity.completeRange(containing: 0) == nil)
    }

    @Test func theEdgesOfInt64MergeAndForgetWithoutTrapping() {
        var continuity = ChannelContinuity(completeRanges: [Int64.max...Int64.max, Int64.min...Int64.min])
        #expect(continuity.completeRanges == [Int64.min...Int64.min, Int64.max...Int64.max])
        continuity.insert((Int64.min + 1)...0)
        continuity.insert(1...(Int64.max - 1))
        #expect(continuity.completeRanges == [Int64.min...Int64.max])
        #expect(continuity.completeRange(containing: Int64.min) == Int64.min...Int64.max)

        var forgotten = continuity
        forgotten.forget(through: Int64.min)
        #expect(forgotten.completeRanges == [(Int64.min + 1)...Int64.max])
        forgotten.forget(through: Int64.max - 1)
        #expect(forgotten.completeRanges == [Int64.max...Int64.max])
        forgotten.forget(through: Int64.max)
        #expect(forgotten.completeRanges.isEmpty)

        var single = ChannelContinuity(completeRanges: [Int64.min...Int64.min])
        single.forget(through: Int64.min)
        #expect(single.completeRanges.isEmpty)
    }

    @Test func forgetKeepsOnlyTheTimesAfterTheGivenOne() {
        var continuity = ChannelContinuity(completeRanges: [1...3, 5...10, 20...30], changeLogToken: "t")
        continuity.forget(through: 5)
        #expect(continuity.completeRanges == [6...10, 20...30])
        continuity.forget(through: 10)
        #expect(continuity.completeRanges == [20...30])
        continuity.forget(through: 0)
        #expect(continuity.completeRanges == [20...30])
        #expect(continuity.changeLogToken == "t")
    }

    // MARK: - replace(_:in:covering:)

    @Test func replaceCoveringARangeRemovesOnlyTheMessagesInsideItThatThePageLacks() throws {
        // Given messages at 1, 2, 3, 4 and 5 seconds
        let cache = try ChatCache(directory: folder.url)
        try cache.messages.replace(Fixtures.messages(5), in: url)

        // When the server's answer for 2000...3500 is message 2, edited, and a new message 6
        let edited = Fixtures.message(2, at: 2_000, text: "edited")
        let result = try cache.messages.replace([Fixtures.message(6, at: 2_500), edited], in: url, covering: 2_000...3_500)

        // Then 3 is gone, 1, 4 and 5 (outside the range) stay, and the range is complete
        #expect(result == SaveResult(filesWritten: 1))
        #expect(try cache.messages.load(in: url).map(\.messageID) == [1, 2, 6, 4, 5])
        #expect(try cache.messages.load(in: url)[1].text == "edited")
        #expect(try cache.messages.continuity(in: url) == ChannelContinuity(completeRanges: [2_000...3_500]))
        // and both are on disk for another instance
        let other = try ChatCache(directory: folder.url)
        #expect(try other.messages.continuity(in: url).completeRanges == [2_000...3_500])
    }

    @Test func aRangeFromTheChannelStartRemovesEverythingUpToItsEnd() throws {
        let cache = try ChatCache(directory: folder.url)
        try cache.messages.replace(Fixtures.messages(5), in: url)
        try cache.messages.replace([Fixtures.message(3, at: 3_000)], in: url, covering: Self.start...3_000)
        #expect(try cache.messages.load(in: url).map(\.messageID) == [3, 4, 5])
        #expect(try cache.messages.continuity(in: url).completeRanges == [Self.start...3_000])
        // Touching pages merge: the channel is complete from its first message to 5000.
        try cache.messages.replace([Fixtures.message(4, at: 4_000), Fixtures.message(5, at: 5_000)], in: url, covering: 3_001...5_000)
        #expect(try cache.messages.continuity(in: url).completeRanges == [Self.start...5_000])
    }

    @Test func theTokenIsKeptWithTheRangesAndForgottenOnRequest() throws {
        let cache = try ChatCache(directory: folder.url)
        // A channel not cached records nothing.
        try cache.messages.setChangeLogToken("early", in: url)
        #expect(!exists(folder.appending("messages")))
        #expect(try cache.messages.continuity(in: url) == ChannelContinuity())

        try cache.messages.replace(Fixtures.messages(2), in: url, covering: 0...9_999)
        try cache.messages.setChangeLogToken("t1", in: url)
        try cache.messages.replace([Fixtures.message(3, at: 10_000)], in: url, covering: 10_000...10_000)
        #expect(try cache.messages.continuity(in: url) == ChannelContinuity(completeRanges: [0...10_000], changeLogToken: "t1"))
        try cache.messages.setChangeLogToken(nil, in: url)
        #expect(try cache.messages.continuity(in: url) == ChannelContinuity(completeRanges: [0...10_000]))
    }

    @Test func aMessageOutsideTheRangeThrowsBeforeAnythingIsWritten() throws {
        // Given a channel with a continuity
        let cache = try ChatCache(directory: folder.url)
        try cache.messages.replace(Fixtures.messages(3), in: url, covering: Self.start...3_000)
        let snapshot = try TemporaryFolder()
        let before = snapshot.appending("before")
        try FileManager.default.copyItem(at: folder.url, to: before)

        // When a page holds a message created after the range
        let error = #expect(throws: FlatCacheError.self) {
            try cache.messages.replace(
                [Fixtures.message(4, at: 4_000), Fixtures.message(9, at: 9_000)], in: url, covering: 4_000...5_000)
        }

        // Then it is misplaced, and the folder is unchanged
        guard case .misplacedMessage(let id, _, _)? = error else {
            Issue.record("expected misplacedMessage, got \(String(describing: error))")
            return
        }
        #expect(id == "9")
        let differences = try GoldenFolder.differences(between: folder.url, and: before)
        #expect(differences.isEmpty, "\(differences)")
        #expect(try cache.messages.load(in: url).map(\.messageID) == [1, 2, 3])
        // A message of another channel is refused the same way.
        #expect(throws: FlatCacheError.self) {
            try cache.messages.replace([Fixtures.message(4, at: 4_000, in: "other")], in: url, covering: 4_000...5_000)
        }
        #expect(try cache.messages.continuity(in: url).completeRanges == [Self.start...3_000])
    }

    @Test func anAsyncReplaceIsOnDiskWhenItReturns() async throws {
        // Given a cache that writes saves behind, a minute later
        let cache = try ChatCache(directory: folder.url, configuration: Configuration(writeDelay: .seconds(60)))

        // When a page is recorded with the async variants
        try await cache.messages.replace(Fixtures.messages(3), in: url, covering: 0...5_000)
        try await cache.messages.setChangeLogToken("t", in: url)

        // Then another instance reads both at once
        let other = try ChatCache(directory: folder.url)
        #expect(try other.messages.loadNow(in: url) == Fixtures.messages(3))
        #expect(try await other.messages.continuity(in: url) == ChannelContinuity(completeRanges: [0...5_000], changeLogToken: "t"))
    }

    // MARK: - Retention

    @Test func pagingBackPastTheLimitKeepsOnlyTheTimesAfterTheOldestKeptMessage() throws {
        // Given a limit of 3 and the newest page
        let cache = try ChatCache(directory: folder.url, configuration: Configuration(maxMessagesPerChannel: 3))
        try cache.messages.replace(
            [Fixtures.message(5, at: 5_000), Fixtures.message(6, at: 6_000), Fixtures.message(7, at: 7_000)],
            in: url, covering: 5_000...Int64.max)

        // When an older page, touching it, is cached: retention drops it all again
        let result = try cache.messages.replace(
            [Fixtures.message(2, at: 2_000), Fixtures.message(3, at: 3_000), Fixtures.message(4, at: 4_000)],
            in: url, covering: Self.start...4_999)

        // Then what is known complete starts after the oldest kept message's millisecond
        #expect(result.recordsDropped == 3)
        #expect(try cache.messages.load(in: url).map(\.messageID) == [5, 6, 7])
        #expect(try cache.messages.continuity(in: url).completeRanges == [5_001...Int64.max])
    }

    @Test func retentionThatSplitsAMillisecondForgetsThatMillisecond() throws {
        // Two messages in one millisecond, a limit of 2: the lower id goes, so 5000 is no longer complete.
        let cache = try ChatCache(directory: folder.url, configuration: Configuration(maxMessagesPerChannel: 2))
        try cache.messages.replace(
            [Fixtures.message(1, at: 5_000), Fixtures.message(2, at: 5_000), Fixtures.message(3, at: 6_000)],
            in: url, covering: 0...10_000)
        #expect(try cache.messages.load(in: url).map(\.messageID) == [2, 3])
        #expect(try cache.messages.continuity(in: url).completeRanges == [5_001...10_000])
    }

    @Test func aPlainSaveThatDropsTheOldestMakesALaterReadClip() throws {
        // Given a limit of 3 and a channel complete from its first message
        let cache = try ChatCache(directory: folder.url, configuration: Configuration(maxMessagesPerChannel: 3))
        try cache.messages.replace(Fixtures.messages(3), in: url, covering: Self.start...3_500)
        #expect(try cache.messages.continuity(in: url).completeRanges == [Self.start...3_500])

        // When a plain save of a newer message pushes the oldest out
        try cache.messages.save([Fixtures.message(4, at: 4_000)])

        // Then a read (here, or in another instance) keeps only the times after the oldest kept message
        #expect(try cache.messages.load(in: url).map(\.messageID) == [2, 3, 4])
        #expect(try cache.messages.continuity(in: url).completeRanges == [2_001...3_500])
        let other = try ChatCache(directory: folder.url, configuration: Configuration(maxMessagesPerChannel: 3))
        #expect(try other.messages.continuity(in: url).completeRanges == [2_001...3_500])
    }

    @Test func aPlainSaveThatDropsNothingKeepsTheRanges() throws {
        let cache = try ChatCache(directory: folder.url, configuration: Configuration(maxMessagesPerChannel: 3))
        try cache.messages.replace(Fixtures.messages(2), in: url, covering: Self.start...2_500)
        try cache.messages.save([Fixtures.message(3, at: 3_000)])
        #expect(try cache.messages.continuity(in: url).completeRanges == [Self.start...2_500])
    }

    @Test func aPlainSaveOfAnOlderMessageThatRetentionDropsClipsTheRanges() throws {
        // Given a limit of 3 and a channel complete from 0, its oldest cached message at 5000
        let cache = try ChatCache(directory: folder.url, configuration: Configuration(maxMessagesPerChannel: 3))
        try cache.messages.replace(
            [Fixtures.message(5, at: 5_000), Fixtures.message(6, at: 6_000), Fixtures.message(7, at: 7_000)],
            in: url, covering: 0...7_000)

        // When a plain save brings a message at 2000, inside the complete range, and retention drops it at once
        let result = try cache.messages.save([Fixtures.message(2, at: 2_000)])

        // Then the range no longer says there is nothing between 0 and 5000: the cache knows of message 2 and lacks it
        #expect(result.recordsDropped == 1)
        #expect(try cache.messages.load(in: url).map(\.messageID) == [5, 6, 7])
        let continuity = try cache.messages.continuity(in: url)
        #expect(continuity.completeRange(containing: 2_000) == nil, "\(continuity.completeRanges)")
    }

    // MARK: - The continuity goes with the messages

    /// Two channels with continuity: `url` and `other`.
    func cacheWithTwoContinuities(_ configuration: Configuration = Configuration()) throws -> ChatCache<ChatMessage, ChatChannel, ChatUser> {
        let cache = try ChatCache(directory: folder.url, configuration: configuration)
        try cache.messages.replace(Fixtures.messages(3), in: url, covering: Self.start...3_000)
        try cache.messages.replace(Fixtures.messages(2, in: "other"), in: "other", covering: Self.start...2_000)
        try cache.messages.setChangeLogToken("t", in: url)
        expectContinuityFile(of: url, exists: true)
        expectContinuityFile(of: "other", exists: true)
        return cache
    }

    @Test func removingAChannelsMessagesRemovesItsContinuity() throws {
        let cache = try cacheWithTwoContinuities()
        try cache.messages.removeAll(in: url)
        expectContinuityFile(of: url, exists: false)
        #expect(try cache.messages.continuity(in: url) == ChannelContinuity())
        #expect(try cache.messages.continuity(in: "other").completeRanges == [Self.start...2_000])
        // Cached again by a plain save: still nothing known.
        try cache.messages.save(Fixtures.messages(1))
        #expect(try cache.messages.continuity(in: url) == ChannelContinuity())
    }

    @Test func removingEverythingRemovesEveryContinuity() throws {
        let cache = try cacheWithTwoContinuities()
        try cache.removeAll()
        expectContinuityFile(of: url, exists: false)
        expectContinuityFile(of: "other", exists: false)
        try cache.messages.save(Fixtures.messages(3))
        #expect(try cache.messages.continuity(in: url) == ChannelContinuity())
    }

    @Test func replacingAChannelWholeRemovesItsContinuity() throws {
        let cache = try cacheWithTwoContinuities()
        try cache.messages.replace(Fixtures.messages(3), in: url)
        expectContinuityFile(of: url, exists: false)
        #expect(try cache.messages.continuity(in: url) == ChannelContinuity())
        #expect(try cache.messages.continuity(in: "other").completeRanges == [Self.start...2_000])
    }

    @Test func anAsyncWholeReplaceRemovesTheContinuityByTheTimeItIsRead() async throws {
        let cache = try cacheWithTwoContinuities(Configuration(writeDelay: .seconds(60)))
        try await cache.messages.replace(Fixtures.messages(1), in: url)
        // The waiting replace is written (continuity first) before the continuity is read.
        #expect(try await cache.messages.continuity(in: url) == ChannelContinuity())
        expectContinuityFile(of: url, exists: false)
        #expect(try cache.messages.loadNow(in: url) == Fixtures.messages(1))
    }

    @Test func aMessageFileMovedAsideAsDamagedTakesItsContinuity() throws {
        // Given a channel with a continuity whose message file is damaged
        let recorder = DamageRecorder()
        _ = try cacheWithTwoContinuities(recorder.configuration())
        let file = messagesFile(url)
        var bytes = try Data(contentsOf: file)
        bytes[bytes.count / 2] ^= 0x04
        try bytes.write(to: file)

        // When a new instance reads it (the first holds the messages in memory)
        let reader = try ChatCache(directory: folder.url, configuration: recorder.configuration())
        #expect(try reader.messages.loadIfCached(in: url) == nil)

        // Then the message file went to quarantine, and its continuity went too
        #expect(recorder.files.map(\.path) == ["messages/" + Self.key(url) + ".lines"])
        expectContinuityFile(of: url, exists: false)
        #expect(try reader.messages.continuity(in: url) == ChannelContinuity())
        // and a plain save afresh knows nothing complete
        try reader.messages.save(Fixtures.messages(3))
        #expect(try reader.messages.continuity(in: url) == ChannelContinuity())
        #expect(try reader.messages.continuity(in: "other").completeRanges == [Self.start...2_000])
    }

    // MARK: - Policies

    static let day: TimeInterval = 86_400

    func policyConfiguration(maxAge: Duration? = nil, sizeLimit: Int? = nil, sweepTarget: Double = 1) -> Configuration {
        Configuration(writeDelay: .zero, maxAge: maxAge, sizeLimit: sizeLimit, sweepTarget: sweepTarget, clock: clock.cacheClock)
    }

    /// Three channels of 20 messages, each complete from its first message, saved a minute apart (channel 0 first).
    func populateThreeChannels() async throws {
        let cache = try ChatCache(directory: folder.url, configuration: policyConfiguration())
        for index in 0..<3 {
            let channel = "channel-\(index)"
            try await cache.messages.replace(Fixtures.messages(20, in: channel), in: channel, covering: Self.start...20_000)
            try await cache.messages.setChangeLogToken("token-\(index)", in: channel)
            clock.advance(seconds: 60)
        }
        try await cache.close()
    }

    func bytes(_ file: URL) throws -> Int {
        try Data(contentsOf: file).count + Data(contentsOf: file.appendingPathExtension("sha256")).count
    }

    @Test func aSweepThatEvictsAChannelRemovesItsContinuity() async throws {
        try await populateThreeChannels()
        let total = try await ChatCache(directory: folder.url, configuration: policyConfiguration()).statistics().diskBytes
        // Room for all but channel 0's messages (the least recently used): it alone must go.
        let limit = total - 1
        let target = try total - bytes(messagesFile("channel-0")) + 50
        let cache = try ChatCache(
            directory: folder.url, configuration: policyConfiguration(sizeLimit: limit, sweepTarget: Double(target) / Double(limit)))
        _ = try await cache.sweep()

        #expect(try await cache.statistics().evictions == 1)
        #expect(!exists(messagesFile("channel-0")))
        expectContinuityFile(of: "channel-0", exists: false)
        expectContinuityFile(of: "channel-1", exists: true)
        #expect(try await cache.messages.continuity(in: "channel-0") == ChannelContinuity())
        #expect(
            try await cache.messages.continuity(in: "channel-1")
                == ChannelContinuity(completeRanges: [Self.start...20_000], changeLogToken: "token-1"))
    }

    @Test func aSweepCountsTheContinuityBytesItRemovesWithAChannel() async throws {
        try await populateThreeChannels()
        let total = try await ChatCache(directory: folder.url, configuration: policyConfiguration()).statistics().diskBytes
        let whole = try (0..<2).map { try bytes(messagesFile("channel-\($0)")) + bytes(continuityFile("channel-\($0)")) }
        // Removing channels 0 and 1 whole, continuity included, reaches the target with 100 bytes to spare.
        let limit = total - 1
        let target = total - whole[0] - whole[1] + 100
        let cache = try ChatCache(
            directory: folder.url, configuration: policyConfiguration(sizeLimit: limit, sweepTarget: Double(target) / Double(limit)))
        _ = try await cache.sweep()

        #expect(try await cache.statistics().evictions == 2, "channel 2 was evicted though the target was reached")
        #expect(exists(messagesFile("channel-2")))
    }

    @Test func anExpiredChannelKnowsNothingAndItsSweepRemovesTheContinuity() async throws {
        // Given a channel with a continuity, expired
        let cache = try ChatCache(directory: folder.url, configuration: policyConfiguration(maxAge: .seconds(Self.day)))
        try await cache.messages.replace(Fixtures.messages(3), in: url, covering: Self.start...3_000)
        clock.advance(seconds: Self.day + 1)

        // Then its continuity reads as nothing known, and the sweep removes its files
        #expect(try await cache.messages.continuity(in: url) == ChannelContinuity())
        let swept = try await cache.sweep()
        #expect(swept.expiredChannels == 1)
        #expect(!exists(messagesFile(url)))
        expectContinuityFile(of: url, exists: false)
    }

    @Test func anExpiredChannelSavedAfreshLosesItsContinuity() async throws {
        let cache = try ChatCache(directory: folder.url, configuration: policyConfiguration(maxAge: .seconds(Self.day)))
        try await cache.messages.replace(Fixtures.messages(3), in: url, covering: Self.start...3_000)
        try await cache.messages.setChangeLogToken("t", in: url)
        clock.advance(seconds: Self.day + 1)

        // When a plain save starts the channel afresh
        try await cache.messages.save([Fixtures.message(10, at: 10_000)])

        // Then nothing is known of it, on disk either
        #expect(try await cache.messages.load(in: url).map(\.messageID) == [10])
        #expect(try await cache.messages.continuity(in: url) == ChannelContinuity())
        expectContinuityFile(of: url, exists: false)
    }

    @Test func anExpiredChannelReplacedCoveringARangeKnowsOnlyThatRange() async throws {
        let cache = try ChatCache(directory: folder.url, configuration: policyConfiguration(maxAge: .seconds(Self.day)))
        try await cache.messages.replace(Fixtures.messages(3), in: url, covering: Self.start...3_000)
        try await cache.messages.setChangeLogToken("t", in: url)
        clock.advance(seconds: Self.day + 1)

        try await cache.messages.replace([Fixtures.message(10, at: 10_000)], in: url, covering: 9_000...11_000)

        #expect(try await cache.messages.load(in: url).map(\.messageID) == [10])
        #expect(try await cache.messages.continuity(in: url) == ChannelContinuity(completeRanges: [9_000...11_000]))
    }

    // MARK: - Damage

    enum Damage: String, CaseIterable, Sendable {
        case flippedByte, wrongSidecar, missingSidecar
    }

    @Test(arguments: Damage.allCases)
    func aDamagedContinuityIsReportedMovedAsideAndReadAsNothingKnown(damage: Damage) throws {
        // Given a channel with a continuity, then damage to the continuity file
        let recorder = DamageRecorder()
        try ChatCache(directory: folder.url).messages.replace(Fixtures.messages(3), in: url, covering: Self.start...3_000)
        let file = continuityFile(url)
        let sidecar = file.appendingPathExtension("sha256")
        switch damage {
        case .flippedByte:
            var bytes = try Data(contentsOf: file)
            bytes[5] ^= 0x01
            try bytes.write(to: file)
        case .wrongSidecar:
            try Data((String(repeating: "0", count: 64) + "  " + file.lastPathComponent + "\n").utf8).write(to: sidecar)
        case .missingSidecar:
            try FileManager.default.removeItem(at: sidecar)
        }
        let messages = try Data(contentsOf: messagesFile(url))

        // When another instance reads it
        let cache = try ChatCache(directory: folder.url, configuration: recorder.configuration())
        let continuity = try cache.messages.continuity(in: url)

        // Then it is nothing known, reported once, moved to quarantine; the messages are untouched
        #expect(continuity == ChannelContinuity())
        #expect(recorder.files.count == 1, "\(recorder.files)")
        let report = try #require(recorder.files.first)
        #expect(report.path == Self.continuityPath(url))
        let movedTo = try #require(report.movedTo)
        #expect(movedTo.hasPrefix("quarantine/"))
        #expect(exists(folder.appending(movedTo).appendingPathComponent(file.lastPathComponent)))
        expectContinuityFile(of: url, exists: false)
        #expect(try Data(contentsOf: messagesFile(url)) == messages)
        #expect(try cache.messages.load(in: url) == Fixtures.messages(3))
        // and the next page is recorded afresh
        try cache.messages.replace([Fixtures.message(3, at: 3_000)], in: url, covering: 3_000...3_000)
        #expect(try cache.messages.continuity(in: url).completeRanges == [3_000...3_000])
        #expect(recorder.files.count == 1)
    }

    @Test func aDamagedContinuityInAReadOnlyCacheIsReportedOnceAndStaysInPlace() throws {
        // Given a damaged continuity file
        try ChatCache(directory: folder.url).messages.replace(Fixtures.messages(3), in: url, covering: Self.start...3_000)
        let file = continuityFile(url)
        var bytes = try Data(contentsOf: file)
        bytes[5] ^= 0x01
        try bytes.write(to: file)
        let recorder = DamageRecorder()
        let reader = try ChatCache(directory: folder.url, configuration: recorder.configuration(readOnly: true))

        // When a read-only cache reads it
        #expect(try reader.messages.continuity(in: url) == ChannelContinuity())

        // Then it is reported once (like a damaged message file per load), left in place, the messages readable
        #expect(recorder.files.count == 1, "\(recorder.files.count) reports for one read")
        #expect(recorder.files.allSatisfy { $0.path == Self.continuityPath(url) && $0.movedTo == nil })
        #expect(try Data(contentsOf: file) == bytes)
        #expect(try reader.messages.load(in: url) == Fixtures.messages(3))
    }

    /// Records no writer makes, each in a file with a valid sidecar: they must read as damaged, never trap.
    enum Hostile: String, CaseIterable, Sendable {
        case unknownVersion, unknownFlags, endsAfterFlags, endsInARange, countPastTheEnd, countNegative, countMax
        case rangesOutOfOrder, rangesTouching, rangeUpsideDown, secondRangeFromChannelStart, bytesLeftOver
        case tokenNotUTF8, tokenLengthPastEnd, twoRecords, noRecord, emptyLine, notCanonicalBase64, noFinalNewline

        var contents: Data {
            let good = ContinuityTests.record(flags: 0, ranges: [(1_000, 2_000)])
            func line(_ record: Data) -> Data { ContinuityTests.line(record) }
            switch self {
            case .unknownVersion: return line(ContinuityTests.record(version: 2, flags: 0))
            case .unknownFlags: return line(ContinuityTests.record(flags: 4))
            case .endsAfterFlags: return line(Data([1, 0]))
            case .endsInARange: return line(good.dropLast(3))
            case .countPastTheEnd: return line(ContinuityTests.record(flags: 0, count: 2, ranges: [(1, 2)]))
            case .countNegative: return line(ContinuityTests.record(flags: 0, count: -1))
            case .countMax: return line(ContinuityTests.record(flags: 0, count: Int64.max))
            case .rangesOutOfOrder: return line(ContinuityTests.record(flags: 0, ranges: [(5_000, 6_000), (1_000, 2_000)]))
            case .rangesTouching: return line(ContinuityTests.record(flags: 0, ranges: [(1_000, 2_000), (2_001, 3_000)]))
            case .rangeUpsideDown: return line(ContinuityTests.record(flags: 0, ranges: [(2_000, 1_000)]))
            case .secondRangeFromChannelStart:
                return line(ContinuityTests.record(flags: 0, ranges: [(Int64.min, Int64.min), (Int64.min, 0)]))
            case .bytesLeftOver: return line(ContinuityTests.record(flags: 0, ranges: [(1, 2)], trailing: [0]))
            case .tokenNotUTF8: return line(ContinuityTests.record(flags: 2, token: [0xC0, 0x80]))
            case .tokenLengthPastEnd: return line(Data([1, 2] + [UInt8](repeating: 0, count: 16) + [100, 0x61]))
            case .twoRecords: return line(good) + line(good)
            case .noRecord: return Data()
            case .emptyLine: return Data("\n".utf8)
            // The last byte, 0, is "AA==": "AB==" decodes to it too, with a padding bit set.
            case .notCanonicalBase64: return Data((good.base64EncodedString().dropLast(3) + "B==\n").utf8)
            case .noFinalNewline: return line(good).dropLast()
            }
        }
    }

    @Test(arguments: Hostile.allCases)
    func aHostileRecordReadsAsDamagedWithoutTrapping(hostile: Hostile) throws {
        // Given a cached channel whose continuity file holds a record no writer makes
        let recorder = DamageRecorder()
        let cache = try ChatCache(directory: folder.url, configuration: recorder.configuration())
        try cache.messages.replace(Fixtures.messages(3), in: url)
        try writeContinuity(hostile.contents, for: url)

        // When it is read, then nothing is known, it is reported and moved aside, the messages load
        #expect(try cache.messages.continuity(in: url) == ChannelContinuity())
        #expect(recorder.files.map(\.path) == [Self.continuityPath(url)])
        #expect(recorder.files.first?.movedTo != nil)
        expectContinuityFile(of: url, exists: false)
        #expect(try cache.messages.load(in: url) == Fixtures.messages(3))
    }

    @Test func aHandWrittenRecordAtTheEdgesOfInt64IsReadAsWritten() throws {
        // Given the record another writer following docs/format.md would write: message 1 the anchor,
        // an empty token that is present, ranges reaching both ends of Int64
        let recorder = DamageRecorder()
        let cache = try ChatCache(directory: folder.url, configuration: recorder.configuration())
        try cache.messages.replace(Fixtures.messages(3), in: url)
        let record = Self.record(
            flags: 3, anchorAt: 1_000, anchorID: Self.idDigest("1"),
            ranges: [(Int64.min, -1), (1, 1), (3, Int64.max)])
        try writeContinuity(Self.line(record), for: url)

        // When it is read, then it says exactly that
        let continuity = try cache.messages.continuity(in: url)
        #expect(continuity.completeRanges == [Int64.min...(-1), 1...1, 3...Int64.max])
        #expect(continuity.changeLogToken == "")
        #expect(recorder.files.isEmpty)

        // and a record whose anchor is another message (the oldest was dropped) is clipped to after the oldest
        try writeContinuity(
            Self.line(Self.record(flags: 1, anchorAt: 500, anchorID: Self.idDigest("0"), ranges: [(Int64.min, 5_000)])),
            for: url)
        #expect(try cache.messages.continuity(in: url) == ChannelContinuity(completeRanges: [1_001...5_000]))
    }

    @Test func aDamagedChannelListTokenInAReadOnlyCacheIsReportedOnceAndStaysInPlace() throws {
        // Given the channel list's token (channels.continuity, the same record), damaged
        let writer = try ChatCache(directory: folder.url)
        try writer.channels.replace(with: [Fixtures.channel(url, lastMessageAt: 1)])
        try writer.channels.setChangeLogToken("list-1")
        #expect(try writer.channels.changeLogToken() == "list-1")
        let file = folder.appending("channels.continuity")
        var bytes = try Data(contentsOf: file)
        bytes[5] ^= 0x01
        try bytes.write(to: file)
        let recorder = DamageRecorder()
        let reader = try ChatCache(directory: folder.url, configuration: recorder.configuration(readOnly: true))

        // When a read-only cache reads it, then it is no token, reported once, left in place
        #expect(try reader.channels.changeLogToken() == nil)
        #expect(recorder.files.count == 1, "\(recorder.files.count) reports for one read")
        #expect(recorder.files.allSatisfy { $0.path == "channels.continuity" && $0.movedTo == nil })
        #expect(try Data(contentsOf: file) == bytes)
        #expect(try reader.channels.load().count == 1)
    }

    // MARK: - Read-only, and the folder

    @Test func aReadOnlyCacheReadsTheContinuityAndRefusesToChangeIt() throws {
        // Given a cache with a continuity
        let writer = try ChatCache(directory: folder.url)
        try writer.messages.replace(Fixtures.messages(3), in: url, covering: Self.start...3_000)
        try writer.messages.setChangeLogToken("t", in: url)
        let before = try GoldenFolder.files(in: folder.url)
        let snapshot = try before.map { try Data(contentsOf: folder.appending($0)) }

        // When it is opened read-only
        let reader = try ChatCache(directory: folder.url, configuration: Configuration(readOnly: true))

        // Then it reads the continuity, every change throws readOnlyCache, and nothing changed
        let expected = ChannelContinuity(completeRanges: [Self.start...3_000], changeLogToken: "t")
        #expect(try reader.messages.continuity(in: url) == expected)
        func expectReadOnly(_ write: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) {
            let error = #expect(throws: FlatCacheError.self, sourceLocation: sourceLocation) { try write() }
            guard case .readOnlyCache? = error else {
                Issue.record("expected readOnlyCache, got \(String(describing: error))", sourceLocation: sourceLocation)
                return
            }
        }
        expectReadOnly { try reader.messages.replace([Fixtures.message(4, at: 4_000)], in: url, covering: 4_000...5_000) }
        expectReadOnly { try reader.messages.replace([], in: "new", covering: 0...1) }
        expectReadOnly { try reader.messages.setChangeLogToken("u", in: url) }
        #expect(try GoldenFolder.files(in: folder.url) == before)
        #expect(try before.map { try Data(contentsOf: folder.appending($0)) } == snapshot)
        #expect(try reader.messages.continuity(in: url) == expected)
    }

    @Test func aFolderWithContinuityFilesAndNoMarkerGetsItsMarkerBack() throws {
        // Continuity files live in messages/, one of FlatCache's own names.
        try ChatCache(directory: folder.url).messages.replace(Fixtures.messages(2), in: url, covering: 0...2_000)
        try FileManager.default.removeItem(at: folder.appending("format"))

        let cache = try ChatCache(directory: folder.url)

        #expect(try String(contentsOf: folder.appending("format"), encoding: .utf8) == "flatcache 2\n")
        #expect(try cache.messages.continuity(in: url).completeRanges == [0...2_000])
    }

    @Test func continuityFilesAreNotTakenForMessageFiles() throws {
        let cache = try cacheWithTwoContinuities()
        #expect(try cache.messages.loadAll().count == 5)
        #expect(try cache.verify().allSatisfy(\.isValid))
        let summary = try CacheFolderSummary.read(directory: folder.url)
        #expect(summary.files.filter { $0.role == .messages }.count == 2)
    }
}
