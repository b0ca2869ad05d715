import Foundation

/// Writes the binary parts of a search snapshot's records: unsigned numbers
/// as LEB128 (7 bits a byte), signed ones zigzagged first, strings and byte
/// runs as their length then their bytes.
struct SnapshotWriter {
    private(set) var bytes = [UInt8]()

    mutating func byte(_ value: UInt8) { bytes.append(value) }

    mutating func unsigned(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    mutating func count(_ value: Int) { unsigned(UInt64(value)) }

    mutating func signed(_ value: Int64) { unsigned(UInt64(bitPattern: (value << 1) ^ (value >> 63))) }

    mutating func fixed64(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    mutating func run(_ run: some Collection<UInt8>) {
        count(run.count)
        bytes.append(contentsOf: run)
    }

    mutating func string(_ value: String) { run(value.utf8) }
}

/// Reads what ``SnapshotWriter`` wrote; every read throws ``Malformed`` past the end or on a bad value.
struct SnapshotReader {
    struct Malformed: Error {}

    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { offset == bytes.count }

    mutating func byte() throws(Malformed) -> UInt8 {
        guard offset < bytes.count else { throw Malformed() }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func unsigned() throws(Malformed) -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try byte()
            guard shift < 64 else { throw Malformed() }
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
    }

    /// A count of things that follow: at most the bytes left, so that a damaged count cannot make a huge array.
    mutating func count() throws(Malformed) -> Int {
        let value = try unsigned()
        guard value <= UInt64(bytes.count - offset) else { throw Malformed() }
        return Int(value)
    }

    mutating func signed() throws(Malformed) -> Int64 {
        let value = try unsigned()
        return Int64(bitPattern: value >> 1) ^ -Int64(bitPattern: value & 1)
    }

    mutating func fixed64() throws(Malformed) -> UInt64 {
        var value: UInt64 = 0
        for shift in stride(from: 0, to: 64, by: 8) { value |= UInt64(try byte()) << UInt64(shift) }
        return value
    }

    mutating func run() throws(Malformed) -> [UInt8] {
        let length = try count()
        defer { offset += length }
        return Array(bytes[offset..<offset + length])
    }

    mutating func string() throws(Malformed) -> String {
        let length = try count()
        defer { offset += length }
        guard let string = String(validating: bytes[offset..<offset + length], as: UTF8.self) else { throw Malformed() }
        return string
    }
}
