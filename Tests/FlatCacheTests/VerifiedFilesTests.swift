@testable import FlatCache
import Foundation
import Testing

/// A file this process checked against its sidecar is read again without
/// hashing it while its stamps and its sidecar's stay; any write, in place
/// or by another process, changes them and the file is hashed again.
@Suite(.timeLimit(.minutes(1))) struct VerifiedFilesTests {
    let folder = try! TemporaryFolder()
    let url = "verified-\(UUID())"

    static func message(_ id: Int64, in url: String) -> ChatMessage {
        ChatMessage(messageID: id, channelURL: url, createdAt: id * 1_000, text: "message \(id)")
    }

    func cache() throws -> ChatCache<ChatMessage, ChatChannel, ChatUser> {
        try ChatCache(directory: folder.url)
    }

    /// The channel's data file (the only one in the messages folder).
    func messagesFile() throws -> String {
        let messages = folder.appending("messages").path
        let names = try FileManager.default.contentsOfDirectory(atPath: messages)
        return messages + "/" + (try #require(names.first { $0.hasSuffix(".lines") }))
    }

    /// Waits until the data file at `path` and its sidecar were last changed
    /// long enough ago for a check to count (``VerifiedFiles/settledAfter``).
    func waitUntilSettled(_ path: String) async throws {
        while true {
            let times = try [path, path + ".sha256"].map { path in
                let stamp = try #require(try FileSystem.stamp(at: path))
                return Double(stamp.changed.seconds) + Double(stamp.changed.nanoseconds) / 1e9
            }
            if VerifiedFiles.now() - times.max()! > VerifiedFiles.settledAfter + 0.05 { return }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    @Test func aFileCheckedOnceIsReadAgainWithoutHashing() async throws {
        // Given a data file and its sidecar, last changed a while ago, checked once
        let path = folder.appending("data.lines").path
        let file = RecordFile(path: path)
        _ = try file.write([Data("one".utf8), Data("two".utf8)], synchronized: false)
        try await waitUntilSettled(path)
        let body = try #require(try FileSystem.contentsOfFile(at: path))
        _ = try file.verify()
        let proof = try #require(VerifiedFiles.shared.proof(for: path))
        #expect(proof.data == (try FileSystem.stamp(at: path)))
        #expect(proof.hasher.finalize() == SHA256Digest(of: body))

        // When the proof is swapped for one with the same stamps but another hash state
        var forged = SHA256Hasher()
        forged.update(Data("forged".utf8))
        VerifiedFiles.shared.remember(
            path, VerifiedFiles.Proof(data: proof.data, sidecar: proof.sidecar, hasher: forged), checkStarted: VerifiedFiles.now())

        // Then a read takes the proof's word (it did not hash), and `verify`'s check hashes all the same
        #expect(try file.verify().tail?.hasher.finalize() == forged.finalize())
        #expect(try file.check(finishing: false).tail?.hasher.finalize() == SHA256Digest(of: body))
    }

    @Test func aCheckRightAfterAWriteIsNotRemembered() throws {
        // Given a file written just now: a write in the same clock tick could keep its stamps
        let path = folder.appending("fresh.lines").path
        let file = RecordFile(path: path)
        _ = try file.write([Data("one".utf8)], synchronized: false)

        // When it is checked at once, then no proof is kept
        guard case .body = try file.verify().found else { Issue.record("the file did not verify"); return }
        #expect(VerifiedFiles.shared.proof(for: path) == nil)
    }

    @Test func aBitFlippedInPlaceAfterAVerifiedPageIsCaught() async throws {
        // Given a channel saved a while ago whose first page a fresh cache read (and checked whole)
        try cache().messages.saveNow((1...40).map { Self.message($0, in: url) })
        let path = try messagesFile()
        try await waitUntilSettled(path)
        #expect(try await cache().messages.load(in: url, before: 41_000, limit: 30).count == 30)
        #expect(VerifiedFiles.shared.proof(for: path) != nil)

        // When one message's text is changed in place (same file, same size, modification time put back),
        // its line still canonical Base64 of a record that decodes
        let modified = try #require(try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date)
        let data = try #require(try FileSystem.contentsOfFile(at: path))
        let lines = data.split(separator: 0x0A, omittingEmptySubsequences: false)
        let last = lines[lines.count - 2]
        var record = try #require(Data(base64Encoded: Data(last)))
        let text = try #require(record.range(of: Data("message 40".utf8)))
        record[text.lowerBound + 1] = UInt8(ascii: "a")
        let damaged = Data(record.base64EncodedString().utf8)
        #expect(damaged.count == last.count && damaged != Data(last))
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.seek(toOffset: UInt64(last.startIndex))
        try handle.write(contentsOf: damaged)
        try handle.close()
        try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: path)

        // Then a fresh cache's page is a miss, never the changed message
        let page = try await cache().messages.load(in: url, before: 41_000, limit: 30)
        #expect(!page.contains { $0.text == "massage 40" })
        #expect(page == [])
        #expect(FileManager.default.fileExists(atPath: folder.appending("quarantine").path))
    }

    @Test func anotherProcessWriteAfterAVerifiedPageIsSeen() async throws {
        // Given a channel saved a while ago whose first page a fresh cache read (and checked whole)
        try cache().messages.saveNow((1...40).map { Self.message($0, in: url) })
        let path = try messagesFile()
        try await waitUntilSettled(path)
        let reader = try cache()
        #expect(try await reader.messages.load(in: url, before: 41_000, limit: 30).count == 30)
        #expect(VerifiedFiles.shared.proof(for: path) != nil)

        // When another process appends a message
        let process = Process()
        process.executableURL = Executables.url("flatcache-test-helper")
        process.arguments = ["save", folder.url.path, url, "41"]
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)

        // Then the next pages show it, in this cache and a fresh one
        #expect(try await reader.messages.loadLatest(in: url, limit: 30).last == Self.message(41, in: url))
        #expect(try await cache().messages.loadLatest(in: url, limit: 30).last == Self.message(41, in: url))
        // and an append by this cache after it leaves a file whose sidecar matches it (`verify` hashes every file)
        try reader.messages.saveNow([Self.message(42, in: url)])
        #expect(try cache().messages.loadNow(in: url) == (1...42).map { Self.message($0, in: url) })
        #expect(try await cache().verify().allSatisfy(\.isValid))
        #expect(!FileManager.default.fileExists(atPath: folder.appending("quarantine").path))
    }
}
