@testable import FlatCache
import Foundation
import Testing

@Suite struct SidecarTests {
    let digest = SHA256Digest(of: Data("QQ==\n".utf8))

    @Test func isOneSha256sumLineNamingTheDataFile() {
        let line = String(decoding: Sidecar.contents(digest: digest, name: "users.lines"), as: UTF8.self)
        #expect(line == "\(digest.hex)  users.lines\n")
    }

    @Test func readsBackTheDigestItRecorded() throws {
        let contents = Sidecar.contents(digest: digest, name: "a.lines")
        #expect(try Sidecar.digest(in: contents, name: "a.lines") == digest)
    }

    @Test(arguments: [
        "HEX  a.lines\n",  // the right digest for the wrong file is below; this one is short
        "HEX  b.lines\n",  // names another file
        "HEX a.lines\n",  // one space
        "HEX  a.lines",  // no newline
        "HEX  a.lines\n\n",  // an extra line
        "HEX *a.lines\n",  // binary-mode marker
    ])
    func rejectsAnythingButTheExactLine(template: String) {
        let hex = template == "HEX  a.lines\n" ? String(digest.hex.dropLast()) : digest.hex
        let contents = Data(template.replacingOccurrences(of: "HEX", with: hex).utf8)
        #expect(throws: Corruption.malformedSidecar) {
            try Sidecar.digest(in: contents, name: "a.lines")
        }
    }

    @Test func rejectsUppercaseHex() {
        let contents = Data("\(digest.hex.uppercased())  a.lines\n".utf8)
        #expect(throws: Corruption.malformedSidecar) { try Sidecar.digest(in: contents, name: "a.lines") }
    }
}
