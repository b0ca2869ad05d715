import FlatCache
import Foundation
import Testing

/// A replace waiting for write-behind, and another writer (a second
/// `ChatCache` on the folder, or a second process) saving the channel before
/// it is written: the result is the one a synchronous replace gives, written
/// at once and followed by the other writer's saves.
@Suite struct WriteBehindReplaceTests {
    let folder = try! TemporaryFolder()
    static let url = "trip"

    static func message(_ id: Int64, text: String? = nil) -> ChatMessage {
        ChatMessage(messageID: id, channelURL: url, createdAt: id * 1_000, text: text ?? "message \(id)")
    }

    /// A cache that writes `async` saves 60 s later (or at once): only `flush()` writes them in a test.
    func cache(writeDelay: Duration) throws -> ChatCache<ChatMessage, ChatChannel, ChatUser> {
        try ChatCache(directory: folder.url, configuration: Configuration(writeDelay: writeDelay))
    }

    /// What `writer` is left with after replacing with [1, 2, 5] over [5, 6] (synchronously or
    /// not), the other instance then saving 3 and an edit of 2 and deleting 5, and a flush.
    func replaceThenOtherWriter(async: Bool) async throws -> (shownBeforeFlush: [ChatMessage], final: [ChatMessage], onDisk: [ChatMessage]) {
        let writer = try cache(writeDelay: .seconds(60))
        let other = try cache(writeDelay: .zero)
        try other.messages.replaceNow([Self.message(5), Self.message(6)], in: Self.url)

        let list = [Self.message(1), Self.message(2), Self.message(5)]
        if async {
            try await writer.messages.replace(list, in: Self.url)
        } else {
            try writer.messages.replaceNow(list, in: Self.url)
        }
        try other.messages.saveNow([Self.message(3), Self.message(2, text: "edited by the other")])
        try other.messages.applyChangeLogSynchronously(updated: [], deletedMessageIDs: [5], in: Self.url)

        let shown = try await writer.messages.load(in: Self.url)
        try await writer.flush()
        return (shown, try await writer.messages.load(in: Self.url), try cache(writeDelay: .zero).messages.loadNow(in: Self.url))
    }

    @Test func aWaitingReplaceKeepsWhatAnotherInstanceWroteAfterItLikeASynchronousOne() async throws {
        let expected = [Self.message(1), Self.message(2, text: "edited by the other"), Self.message(3)]
        let synchronous = try await replaceThenOtherWriter(async: false)
        #expect(synchronous.final == expected)
        #expect(synchronous.onDisk == expected)

        try FileManager.default.removeItem(at: folder.url)
        let writeBehind = try await replaceThenOtherWriter(async: true)
        #expect(writeBehind.final == expected, "the replace waiting in write-behind wiped the other's saves")
        #expect(writeBehind.onDisk == expected)
        // Loads before the flush show the other's saves over the replace too.
        #expect(writeBehind.shownBeforeFlush == expected)
    }

    @Test(.timeLimit(.minutes(1)), arguments: [false, true])
    func aWaitingReplaceKeepsWhatAnotherProcessWroteAfterIt(async: Bool) async throws {
        // The same with the synchronous replace (written at once) and the async one (written by the flush).
        let writer = try cache(writeDelay: .seconds(60))
        try writer.messages.replaceNow([Self.message(5), Self.message(6)], in: Self.url)
        let list = [Self.message(1), Self.message(2), Self.message(5)]
        if async {
            try await writer.messages.replace(list, in: Self.url)
        } else {
            try writer.messages.replaceNow(list, in: Self.url)
        }

        // Another process saves 3 and deletes 5 while the replace waits.
        for (command, id) in [("save", 3), ("delete", 5)] {
            let process = Process()
            process.executableURL = Executables.url("flatcache-test-helper")
            process.arguments = [command, folder.url.path, Self.url, "\(id)"]
            try process.run()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
        }

        try await writer.flush()
        let expected = [Self.message(1), Self.message(2), Self.message(3)]
        #expect(try await writer.messages.load(in: Self.url) == expected)
        #expect(try cache(writeDelay: .zero).messages.loadNow(in: Self.url) == expected)
    }

    @Test func aReplaceWhoseFileIsReadFirstIsKeptUnderATinyMemoryLimit() async throws {
        // Memory holds nothing: the replace reads the file for its base, and must not be trimmed away with it.
        let writer = try ChatCache(
            directory: folder.url, configuration: Configuration(memoryLimit: 1, writeDelay: .seconds(60)))
        try writer.messages.replaceNow([Self.message(1)], in: Self.url)
        try await writer.messages.replace([Self.message(2)], in: Self.url)
        #expect(try await writer.messages.load(in: Self.url) == [Self.message(2)])
        try await writer.flush()
        #expect(try cache(writeDelay: .zero).messages.loadNow(in: Self.url) == [Self.message(2)])
    }

    @Test func aWaitingReplaceOverAFileNobodyWroteSinceIsWrittenAsItIs() async throws {
        // Nothing in between: the replace's list is the whole content, retention applied.
        let writer = try ChatCache(
            directory: folder.url, configuration: Configuration(maxMessagesPerChannel: 2, writeDelay: .seconds(60)))
        try writer.messages.replaceNow([Self.message(7), Self.message(8)], in: Self.url)
        try await writer.messages.replace([Self.message(1), Self.message(2), Self.message(3)], in: Self.url)
        try await writer.flush()
        #expect(try cache(writeDelay: .zero).messages.loadNow(in: Self.url) == [Self.message(2), Self.message(3)])
    }

    @Test func anotherWritersSaveThatRetentionCutsStaysCutAfterTheWaitingReplace() async throws {
        // The other writer's save makes its file drop the oldest by retention: the replace keeps its own.
        let configuration = Configuration(maxMessagesPerChannel: 3, writeDelay: .seconds(60))
        let writer = try ChatCache(directory: folder.url, configuration: configuration)
        let other = try ChatCache(directory: folder.url, configuration: Configuration(maxMessagesPerChannel: 3))
        try other.messages.replaceNow([Self.message(4), Self.message(5), Self.message(6)], in: Self.url)
        try await writer.messages.replace([Self.message(4), Self.message(5)], in: Self.url)
        try other.messages.applyChangeLogSynchronously(updated: [Self.message(7)], deletedMessageIDs: [], in: Self.url)  // [5, 6, 7]
        try await writer.flush()
        #expect(try await writer.messages.load(in: Self.url) == [Self.message(4), Self.message(5), Self.message(7)])
    }
}

extension MessageStore {
    /// The synchronous ``MessageStore/applyChangeLog(updated:deletedMessageIDs:in:)``, for `async` tests.
    @discardableResult
    func applyChangeLogSynchronously(
        updated: some Sequence<Message>, deletedMessageIDs: some Sequence<Message.MessageID>, in channelURL: String
    ) throws -> SaveResult {
        try blocking.applyChangeLog(updated: updated, deletedMessageIDs: deletedMessageIDs, in: channelURL)
    }
}
