@testable import FlatCache
import Foundation
import Testing

/// A page read from an encrypted file opens its lines one at a time with one
/// ``Sealer/LineOpener``, which keeps its decoding buffer from line to line.
@Suite struct SealerLineOpenerTests {
    static let name = "0123.lines"

    /// Long, empty, short and longer records, so that the buffer kept from a
    /// longer line holds stale bytes when a shorter one is decoded into it.
    static let records = [3_000, 0, 1, 17, 40, 2_000, 5, 4_097].map { count in
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ count) })
    }

    let sealer: Sealer
    let body: Data
    let ranges: [Range<Int>]

    init() throws {
        sealer = try Sealer(.aes256gcm(key: EncryptionTests.key))
        body = RecordLines.encode(Self.records, sealer: sealer, fileName: Self.name)
        ranges = try RecordLines.lineRanges(body)
    }

    @Test func opensEveryLineInAnyOrderWithOneOpener() throws {
        let opener = Sealer.LineOpener(sealer, fileName: Self.name)
        for index in [0, 1, 7, 2, 5, 3, 4, 6, 0] {
            let record = try RecordLines.decodeLine(body, in: ranges[index], number: index + 1, opener: opener)
            #expect(record == Self.records[index], "line \(index + 1)")
        }
    }

    @Test func aLineOfAnotherFileDoesNotOpenAndTheNextStillDoes() throws {
        let opener = Sealer.LineOpener(sealer, fileName: "4567.lines")
        #expect(throws: Corruption.unsealable(line: 3)) {
            try RecordLines.decodeLine(body, in: ranges[2], number: 3, opener: opener)
        }
        let own = Sealer.LineOpener(sealer, fileName: Self.name)
        #expect(throws: Corruption.unsealable(line: 6)) {
            try RecordLines.decodeLine(body, in: ranges[5].dropLast(4), number: 6, opener: own)
        }
        #expect(try RecordLines.decodeLine(body, in: ranges[4], number: 5, opener: own) == Self.records[4])
    }

    @Test func aLineThatIsNotBase64IsReportedAsSuch() {
        let opener = Sealer.LineOpener(sealer, fileName: Self.name)
        let broken = Data("QQ=\n".utf8)
        #expect(throws: Corruption.invalidBase64(line: 2)) {
            try RecordLines.decodeLine(broken, in: 0..<3, number: 2, opener: opener)
        }
    }
}
