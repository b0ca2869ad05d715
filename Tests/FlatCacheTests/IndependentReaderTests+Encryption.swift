@testable import FlatCache
import Foundation
import Testing

/// `Scripts/read-cache.py` opens sealed lines with the key (AES-256-GCM
/// through libcrypto, the file's name as associated data) exactly as
/// FlatCache does: the encrypted golden reads the same, and a line moved to
/// another file or a changed bit is damage to both, even with its sidecar
/// forged to match.
extension IndependentReaderTests {
    /// A file holding `key`'s 32 bytes, and the script's option naming it.
    func keyFile(_ key: Data) throws -> [String] {
        let url = folder.appending("key-\(key.count)-\(key.first ?? 0)")
        try key.write(to: url)
        return ["--key-file", url.path]
    }

    /// Replaces the data file at `relative` in `root` with `lines`, its sidecar forged to match.
    func forge(_ relative: String, in root: URL, lines: [Substring]) throws {
        let bytes = Data(lines.map { $0 + "\n" }.joined().utf8)
        let file = root.appendingPathComponent(relative)
        try bytes.write(to: file)
        try Data("\(SHA256Digest(of: bytes).hex)  \(file.lastPathComponent)\n".utf8)
            .write(to: root.appendingPathComponent(relative + ".sha256"))
    }

    func lines(_ relative: String, in root: URL) throws -> [Substring] {
        try String(decoding: Data(contentsOf: root.appendingPathComponent(relative)), as: UTF8.self).split(separator: "\n")
    }

    @Test func theEncryptedGoldenReadsTheSame() async throws {
        let key = EncryptedGoldenTests.key
        let golden = try python(GoldenFolder.url("encrypted"), keeping: 200, key: key)
        #expect(golden.channels == ["plans", "trip"] && golden.users == ["mina"] && golden.damaged.isEmpty, "\(golden)")
        #expect(golden.messages.values.map(\.count) == [3, 3])
        for n in [1, 2, 200] { try expectSameReading(GoldenFolder.url("encrypted"), keeping: n, key: key) }
        try await expectSameOutbox(GoldenFolder.url("encrypted"), key: key)
        // Appended lines, sealed (format 2): an edit and a deletion.
        let edits = try python(GoldenFolder.url("appended-edits-sealed"), keeping: 200, key: key)
        #expect(edits.messages.values.map(\.count) == [2] && edits.damaged.isEmpty, "\(edits)")
        for n in [1, 200] { try expectSameReading(GoldenFolder.url("appended-edits-sealed"), keeping: n, key: key) }

        // Written afresh, with its usage.lines (sealed, keyed by the HMAC names).
        let root = folder.appending("written")
        try await EncryptedGoldenTests.write(into: root)
        _ = try await ChatCache(directory: root, configuration: EncryptedGoldenTests.configuration()).messages.load(in: "trip")
        let written = try python(root, keeping: 200, key: key)
        #expect(written.usage.count == 2 && written.damaged.isEmpty, "\(written)")
        try expectSameReading(root, keeping: 200, key: key)
    }

    @Test func movedLinesAndFlippedBitsAreDamageToBoth() throws {
        let key = EncryptedGoldenTests.key
        let sealer = try Sealer(.aes256gcm(key: key))
        let plans = "messages/" + sealer.fileKey(forChannel: "plans") + ".lines"
        let trip = "messages/" + sealer.fileKey(forChannel: "trip") + ".lines"
        func copy(_ name: String) throws -> URL {
            let root = folder.appending(name)
            try FileManager.default.copyItem(at: GoldenFolder.url("encrypted"), to: root)
            return root
        }

        // A line of plans' messages put in trip's file, in place of its own first line.
        let moved = try copy("moved")
        try forge(trip, in: moved, lines: [try lines(plans, in: moved)[0]] + (try lines(trip, in: moved).dropFirst()))
        // A line of the channel list put at the end of the users.
        try forge("users.lines", in: moved, lines: try lines("users.lines", in: moved) + lines("channels.lines", in: moved).prefix(1))
        let reading = try python(moved, keeping: 200, key: key)
        #expect(reading.damaged.sorted() == [trip, "users.lines"], "\(reading)")
        try expectSameReading(moved, keeping: 200, key: key)

        // One bit changed in the sealed bytes of plans' second message (its Base64 redone).
        let flipped = try copy("flipped")
        var lines = try lines(plans, in: flipped)
        var sealed = try #require(Data(base64Encoded: String(lines[1])))
        sealed[sealed.count / 2] ^= 0x01
        lines[1] = Substring(sealed.base64EncodedString())
        try forge(plans, in: flipped, lines: lines)
        #expect(try python(flipped, keeping: 200, key: key).damaged == [plans])
        try expectSameReading(flipped, keeping: 200, key: key)
    }

    @Test func anEncryptedFolderNeedsItsKey() throws {
        func run(_ options: [String]) throws -> (status: Int32, error: String) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            process.arguments = [Self.script.path, GoldenFolder.url("encrypted").path] + options
            let error = Pipe()
            process.standardError = error
            process.standardOutput = Pipe()
            try process.run()
            let data = error.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: data, as: UTF8.self))
        }
        let keyID = Encryption.aes256gcm(key: EncryptedGoldenTests.key).keyID
        #expect(try run([]) == (1, "the folder is encrypted with key \(keyID)\n"))
        #expect(try run(try keyFile(Data(repeating: 7, count: 32))) == (1, "the folder is encrypted with key \(keyID)\n"))
        let hex = folder.appending("key.hex")
        try Data((EncryptedGoldenTests.key.map { String(format: "%02x", $0) }.joined() + "\n").utf8).write(to: hex)
        #expect(try run(["--key-file", hex.path]).status == 0)
    }

    /// A rotation from the golden's key to another that a crash cut short:
    /// `rekey` written, the channel list and users already under the new
    /// key, the rest still under the old one. The script reads every file
    /// with either key (unwrapping the other from `rekey`), as FlatCache
    /// reads the folder once an open with that key has finished the change.
    @Test func aKeyChangeACrashCutShortReadsWithEitherKey() throws {
        let old = try Sealer(.aes256gcm(key: EncryptedGoldenTests.key))
        let newKey = Data((0..<32).map { UInt8(255 - $0) })
        let new = try Sealer(.aes256gcm(key: newKey))
        let root = folder.appending("cut")
        try FileManager.default.copyItem(at: GoldenFolder.url("encrypted"), to: root)
        func wrap(_ key: [UInt8], under sealer: Sealer) -> Data {
            let (bytes, ranges) = sealer.seal([Data(key)], fileName: KeyChange.fileName)
            return bytes[ranges[0]]
        }
        let state = KeyChange.State(from: old.keyID, to: new.keyID, fromKey: wrap(old.key, under: new), toKey: wrap(new.key, under: old))
        try KeyChange.contents(state).write(to: root.appendingPathComponent("rekey"))
        for name in ["channels.lines", "users.lines"] {
            let path = root.appendingPathComponent(name).path
            guard case .records(let records) = try RecordFile(path: path, sealer: old).load(finishing: false).contents else {
                Issue.record("\(name) does not open")
                return
            }
            _ = try RecordFile(path: path, sealer: new).write(records.records, synchronized: false)
        }
        let withOld = try python(root, keeping: 200, key: old.key.withUnsafeBufferPointer { Data($0) })
        let withNew = try python(root, keeping: 200, key: newKey)
        #expect(withOld == withNew)
        #expect(withNew.damaged.isEmpty && withNew.users == ["mina"] && withNew.messages.count == 2, "\(withNew)")

        // FlatCache finishes the change forward with the new key, and then reads the same
        // (message files now have their names under the new key).
        let finished = folder.appending("finished")
        try FileManager.default.copyItem(at: root, to: finished)
        var configuration = Configuration()
        configuration.encryption = .aes256gcm(key: newKey)
        _ = try Cache(directory: finished, configuration: configuration)
        #expect(!FileManager.default.fileExists(atPath: finished.appendingPathComponent("rekey").path))
        var library = try flatCache(finished, keeping: 200, key: newKey)
        #expect(library.messages.keys.sorted() == ["plans", "trip"].map { new.fileKey(forChannel: $0) }.sorted())
        #expect(library.messages.values.map(\.count) == [3, 3])
        library.messages = withNew.messages
        library.continuity = withNew.continuity
        library.usage = withNew.usage
        #expect(library == withNew)
    }
}
