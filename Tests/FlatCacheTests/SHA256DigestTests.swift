@testable import FlatCache
import Foundation
import Testing

@Suite struct SHA256DigestTests {
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
    ])
    func matchesTheStandardTestVectors(input: String, hex: String) {
        #expect(SHA256Digest(of: Data(input.utf8)).hex == hex)
    }

    @Test func hashesALargeInputInOneCall() {
        let million = Data(repeating: UInt8(ascii: "a"), count: 1_000_000)
        #expect(SHA256Digest(of: million).hex == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func parsesItsOwnHexBack() throws {
        let digest = SHA256Digest(of: Data("round trip".utf8))
        #expect(SHA256Digest(hex: Array(digest.hex.utf8)) == digest)
    }

    @Test(arguments: [
        "",  // empty
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b85",  // 63 digits
        "E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855",  // uppercase
        "g3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",  // not hex
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 ",  // 65 characters
    ])
    func rejectsAnythingButSixtyFourLowercaseHexDigits(hex: String) {
        #expect(SHA256Digest(hex: Array(hex.utf8)) == nil)
    }
}
