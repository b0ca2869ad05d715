@testable import FlatCache
import Foundation
import Testing

@Suite struct RecordLinesTests {
    @Test func encodesEachRecordAsOnePaddedBase64Line() {
        let body = RecordLines.encode([Data("A".utf8), Data("AB".utf8), Data("ABC".utf8), Data()])
        #expect(String(decoding: body, as: UTF8.self) == "QQ==\nQUI=\nQUJD\n\n")
    }

    @Test func decodesWhatItEncodes() throws {
        let records = (0..<50).map { Data((0..<UInt8($0 * 5)).map { $0 &* 37 }) }
        #expect(try RecordLines.decode(RecordLines.encode(records)) == records)
    }

    @Test func matchesOnlyTheExactBodyItWouldEncode() {
        // Given a body of four lines (one of them empty)
        let records = [Data("A".utf8), Data(), Data("ABCDE".utf8), Data((0..<200).map { UInt8($0) })]
        let body = RecordLines.encode(records)
        #expect(RecordLines.matches(records, body))

        // Then any byte flipped, a byte too few or too many, or a record more or less, is no match
        for offset in body.indices {
            var flipped = body
            flipped[offset] ^= 0x01
            #expect(!RecordLines.matches(records, flipped), "a flip at byte \(offset) matched")
        }
        #expect(!RecordLines.matches(records, body.dropLast()))
        #expect(!RecordLines.matches(records, body + Data("\n".utf8)))
        #expect(!RecordLines.matches(Array(records.dropLast()), body))
        #expect(!RecordLines.matches(records + [Data()], body))
        #expect(RecordLines.matches([], Data()))
        #expect(!RecordLines.matches([], Data("\n".utf8)))
        #expect(!RecordLines.matches([Data()], Data()))
    }

    @Test func anEmptyBodyHoldsNoRecords() throws {
        #expect(try RecordLines.decode(Data()) == [])
        #expect(RecordLines.encode([]) == Data())
    }

    @Test func rejectsATruncatedLastLine() {
        #expect(throws: Corruption.missingFinalNewline) {
            try RecordLines.decode(Data("QQ==\nQU".utf8))
        }
    }

    @Test(arguments: [
        ("QQ==\n!!!!\n", 2),  // not Base64 at all
        ("QQ==\nQUI\n", 2),  // missing padding
        ("QQ==\nQU I=\n", 2),  // a space inside
        ("QQ==\r\n", 1),  // a carriage return (CRLF line ends)
        ("QQ==\nQQ==\n\u{FF}\n", 3),  // a byte that is not ASCII
        // OpenSSL's decoder alone would accept these: FlatCache's lines must not.
        ("  QQ==  \n", 1),  // white space around a valid line
        ("\tQUI\n", 1),  // a leading tab that makes the length right
        ("QQ==QUI=\n", 1),  // padding in the middle
        ("Q===\n", 1),  // three padding characters
        ("====\n", 1),  // padding only
        ("QUJD-\n", 1),  // an end-of-file marker
        ("AC==\n", 1),  // padding bits set: decodes like "AA==", not canonical (found by the fuzzer)
        ("QR==\n", 1),  // likewise, two padding characters
        ("QUK=\n", 1),  // likewise, one padding character
    ])
    func rejectsALineThatIsNotStandardBase64(body: String, line: Int) {
        #expect(throws: Corruption.invalidBase64(line: line)) {
            try RecordLines.decode(Data(body.utf8))
        }
    }
}
