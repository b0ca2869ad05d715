@testable import FlatCache
import Foundation
import Testing

/// `docs/format.md`, "Encryption": the worked sealed line, its parts, the
/// key id, the HMAC names and the `rekey` form are what the code does, and
/// the line is the encrypted golden's `users.lines`.
@Suite struct FormatDocumentEncryptionTests {
    static func document() throws -> String {
        try String(contentsOf: FormatDocumentTests.document, encoding: .utf8)
    }

    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    /// The documented section, from its heading to the next `## `.
    static func section() throws -> Substring {
        let document = try document()
        let start = try #require(document.range(of: "\n## Encryption\n"))
        let end = document.range(of: "\n## ", range: start.upperBound..<document.endIndex)?.lowerBound ?? document.endIndex
        return document[start.upperBound..<end]
    }

    @Test func theWorkedSealedLineIsWhatTheSealerWrites() throws {
        let section = try Self.section()
        let key = EncryptedGoldenTests.key
        let golden = GoldenFolder.url("encrypted")
        let line = try String(decoding: Data(contentsOf: golden.appendingPathComponent("users.lines")), as: UTF8.self)
        #expect(section.contains("\n```\n" + line + "```\n"), "the golden's users.lines")
        let sidecar = try String(decoding: Data(contentsOf: golden.appendingPathComponent("users.lines.sha256")), as: UTF8.self)
        #expect(section.contains("\n```\n" + sidecar + "```\n"), "its sidecar")

        // Sealing mina with the thirteenth counter nonce for users.lines gives that line.
        let plaintext = try Fixtures.mina.serialize()
        let sealer = try Sealer(.aes256gcm(key: key), nonces: .counter(NonceCounter(start: 13)))
        let (bytes, ranges) = sealer.seal([plaintext], fileName: "users.lines")
        let sealed = bytes[ranges[0]]
        #expect(sealed.base64EncodedString() + "\n" == line)
        #expect(sealed.count == plaintext.count + 28 && plaintext.count == 40 && sealed.count == 68)
        #expect(section.contains("plaintext is 40 bytes") && section.contains("the sealed line 68"))

        // Each part in the table.
        let associated = Sealer.associatedData(fileName: "users.lines")
        #expect(String(decoding: associated, as: UTF8.self) == "flatcache 1 users.lines")
        let rows: [(String, String)] = [
            ("key", Self.hex(key)),
            ("nonce", Self.hex(sealed.prefix(12))),
            ("associated data (`flatcache 1 users.lines`)", Self.hex(associated)),
            ("plaintext (the plain line `\(plaintext.base64EncodedString())`)", Self.hex(plaintext)),
            ("ciphertext", Self.hex(sealed.dropFirst(12).dropLast(16))),
            ("tag", Self.hex(sealed.suffix(16))),
        ]
        for (part, value) in rows {
            #expect(section.contains("\n| \(part) | `\(value)` |\n"), "\(part)")
        }
        #expect(Self.hex(sealed.prefix(12)) == "00000000000000000000000d")

        // It opens with its file's name and key only.
        let documented = try #require(Data(base64Encoded: String(line.dropLast())))
        #expect(try sealer.open([documented], fileName: "users.lines") == [plaintext])
        #expect(throws: Corruption.self) { try sealer.open([documented], fileName: "channels.lines") }
        let other = try Sealer(.aes256gcm(key: Data(repeating: 0, count: 32)))
        #expect(throws: Corruption.self) { try other.open([documented], fileName: "users.lines") }
    }

    @Test func theKeyIDAndNamesAreTheDocumentedHMACs() throws {
        let section = try Self.section()
        let encryption = Encryption.aes256gcm(key: EncryptedGoldenTests.key)
        let sealer = try Sealer(encryption)
        #expect(section.contains("\n" + encryption.keyID + "\n"))
        #expect(section.contains("ends with `encryption aes-256-gcm \(encryption.keyID)`"))
        for url in ["plans", "trip"] {
            #expect(section.contains("\n" + sealer.fileKey(forChannel: url) + "\n"), "\(url)")
        }
        // The golden's records line and names are those.
        let records = try String(contentsOf: GoldenFolder.url("encrypted").appendingPathComponent("records"), encoding: .utf8)
        #expect(records.hasSuffix("\n" + RecordTypesFile.encryptionPrefix + encryption.keyID + "\n"))
        #expect(section.contains("\nencryption aes-256-gcm <key id>\n"))
    }

    @Test func theRekeyFormIsWhatAKeyChangeWrites() throws {
        let section = try Self.section()
        let written = String(decoding: KeyChange.contents(.init(from: "a", to: "b", fromKey: Data([1]), toKey: Data([2]))), as: UTF8.self)
        #expect(written == "from a\nto b\nfrom-key AQ==\nto-key Ag==\n")
        #expect(section.contains("\n```\nfrom <key id or plain>\nto <key id or plain>\nfrom-key <Base64>\nto-key <Base64>\n```\n"))
        #expect(String(decoding: KeyChange.contents(.init(from: nil, to: "b")), as: UTF8.self) == "from plain\nto b\n")
        #expect(KeyChange.fileName == "rekey" && section.contains("`flatcache 1 rekey`"))
    }
}
