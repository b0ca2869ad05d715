import Foundation

/// Why bytes did not decode as a built-in record.
///
/// A load never shows this to the app: it treats the file as corrupt (a
/// cache miss), moves it aside, and logs this as the reason.
public struct RecordDecodingError: Error, Sendable, CustomStringConvertible {
    /// What was wrong, for example "string length runs past the end at byte 37".
    public let reason: String

    /// A sentence naming what was wrong.
    public var description: String { "Not a valid record: \(reason)." }
}

/// Why a built-in record could not be turned into bytes: a value the format
/// cannot represent, so that it would not read back.
///
/// ``ChatMessage/serialize()``, ``ChatChannel/serialize()`` and
/// ``ChatUser/serialize()`` throw it before copying anything, and a save
/// wraps it in ``FlatCacheError/serializationFailed(recordType:underlying:)``
/// before any file is written.
///
/// ```swift
/// do {
///     try await cache.messages.save([hugeMessage])
/// } catch FlatCacheError.serializationFailed(_, let underlying as RecordEncodingError) {
///     print(underlying)   // Cannot encode record: text is 268435456 bytes; ...
/// }
/// ```
public struct RecordEncodingError: Error, Sendable, CustomStringConvertible {
    /// What was wrong, naming the field, for example
    /// "text is 268435456 bytes; a string field holds at most 268435455".
    public let reason: String

    /// A sentence naming what was wrong.
    public var description: String { "Cannot encode record: \(reason)." }

    /// The same error for a field of a record nested in `field` (a message's
    /// `sender`, a channel's `lastMessage`): "sender.nickname is ...".
    func nested(in field: String) -> RecordEncodingError {
        RecordEncodingError(reason: field + "." + reason)
    }
}

/// Writes a built-in record's bytes: a version byte, then fields in a fixed
/// order as little-endian integers and strings as a LEB128 length followed
/// by UTF-8 (see `docs/format.md`).
struct BinaryWriter {
    /// The most UTF-8 bytes a string field holds: its length must fit in 4
    /// LEB128 bytes (2^28 - 1, just under 256 MiB), as ``BinaryReader`` requires.
    static let maximumStringLength = (1 << 28) - 1

    private var bytes: [UInt8]

    /// A writer whose buffer starts with room for `capacity` bytes.
    init(capacity: Int) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    mutating func write(_ value: UInt8) {
        bytes.append(value)
    }

    mutating func write(_ value: Int64) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func write(_ value: Bool) {
        bytes.append(value ? 1 : 0)
    }

    /// Writes `value`'s UTF-8 length and bytes, or throws, before copying
    /// anything, when it is too long for the format.
    ///
    /// - Parameter field: The field's name, for the error.
    /// - Throws: ``RecordEncodingError`` when `value` has more than
    ///   ``maximumStringLength`` UTF-8 bytes.
    mutating func write(_ value: String, field: StaticString) throws(RecordEncodingError) {
        let length = value.utf8.count
        guard length <= Self.maximumStringLength else {
            throw RecordEncodingError(
                reason: "\(field) is \(length) bytes; a string field holds at most \(Self.maximumStringLength)")
        }
        var value = value
        value.withUTF8 { utf8 in
            writeLength(utf8.count)
            bytes.append(contentsOf: utf8)
        }
    }

    /// Writes `value`'s length and bytes, or throws when it is too long
    /// for the format (as a string field).
    mutating func write(_ value: Data, field: StaticString) throws(RecordEncodingError) {
        guard value.count <= Self.maximumStringLength else {
            throw RecordEncodingError(
                reason: "\(field) is \(value.count) bytes; a field holds at most \(Self.maximumStringLength)")
        }
        writeLength(value.count)
        bytes.append(contentsOf: value)
    }

    /// The bytes written.
    var data: Data { Data(bytes) }

    /// How many bytes were written.
    var count: Int { bytes.count }

    private mutating func writeLength(_ length: Int) {
        var remaining = UInt(length)
        while remaining >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: remaining) | 0x80)
            remaining >>= 7
        }
        bytes.append(UInt8(remaining))
    }
}

/// Reads what ``BinaryWriter`` wrote, checking every length against the end
/// of the bytes: hostile input throws ``RecordDecodingError``, never traps.
///
/// Made only by ``read(_:_:)``, which keeps it inside the bytes' lifetime.
struct BinaryReader {
    private let buffer: UnsafeRawBufferPointer
    private var offset = 0

    private init(_ buffer: UnsafeRawBufferPointer) {
        self.buffer = buffer
    }

    /// Runs `body` with a reader over `data`, then checks nothing was left over.
    static func read<T>(_ data: Data, _ body: (inout BinaryReader) throws(RecordDecodingError) -> T) throws(RecordDecodingError) -> T {
        let result: Result<T, RecordDecodingError> = data.withUnsafeBytes { buffer in
            var reader = BinaryReader(buffer)
            do throws(RecordDecodingError) {
                let value = try body(&reader)
                guard reader.offset == buffer.count else {
                    throw RecordDecodingError(reason: "\(buffer.count - reader.offset) bytes left over at the end")
                }
                return .success(value)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    mutating func readByte() throws(RecordDecodingError) -> UInt8 {
        guard offset < buffer.count else { throw ended("a byte") }
        defer { offset += 1 }
        return buffer[offset]
    }

    mutating func readInt64() throws(RecordDecodingError) -> Int64 {
        guard buffer.count - offset >= 8 else { throw ended("an integer") }
        defer { offset += 8 }
        return Int64(littleEndian: buffer.loadUnaligned(fromByteOffset: offset, as: Int64.self))
    }

    mutating func readBool() throws(RecordDecodingError) -> Bool {
        switch try readByte() {
        case 0: return false
        case 1: return true
        case let other: throw RecordDecodingError(reason: "\(other) is not a flag (0 or 1) at byte \(offset - 1)")
        }
    }

    /// Reads a version byte that must be in `known`, and returns it.
    mutating func readVersion(in known: ClosedRange<UInt8>, of type: String) throws(RecordDecodingError) -> UInt8 {
        let version = try readByte()
        guard known.contains(version) else {
            throw RecordDecodingError(reason: "\(type) version \(version) is unknown (expected \(known.lowerBound)...\(known.upperBound))")
        }
        return version
    }

    /// Bytes written by ``BinaryWriter/write(_:field:)-(Data,_)``.
    mutating func readBytes() throws(RecordDecodingError) -> Data {
        Data(try readSpan())
    }

    /// Checks the version byte.
    mutating func readVersion(_ expected: UInt8, of type: String) throws(RecordDecodingError) {
        let version = try readByte()
        guard version == expected else {
            throw RecordDecodingError(reason: "\(type) version \(version) is unknown (expected \(expected))")
        }
    }

    mutating func readString() throws(RecordDecodingError) -> String {
        let bytes = try readSpan().assumingMemoryBound(to: UInt8.self)
        // `String(decoding:)` takes the standard library's fast path, but repairs
        // bad UTF-8 with U+FFFD: the bytes come back unchanged exactly when they
        // were valid (a replaced part never reads as the same bytes). Faster than
        // `String(validating:)`, whose generic path looks up type metadata per call.
        var string = String(decoding: bytes, as: UTF8.self)
        let valid = string.withUTF8 { decoded in
            decoded.count == bytes.count
                && (bytes.isEmpty || memcmp(decoded.baseAddress!, bytes.baseAddress!, bytes.count) == 0)
        }
        guard valid else {
            throw RecordDecodingError(reason: "a string is not valid UTF-8 before byte \(offset)")
        }
        return string
    }

    private mutating func readSpan() throws(RecordDecodingError) -> UnsafeRawBufferPointer {
        let length = try readLength()
        guard length <= buffer.count - offset else {
            throw RecordDecodingError(reason: "a length of \(length) runs past the end at byte \(offset)")
        }
        defer { offset += length }
        return UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + length])
    }

    /// A LEB128 length of at most 4 bytes (lengths below 256 MiB), in its
    /// shortest form: a longer one ("0x80 0x00" for 0) would give one record
    /// two encodings.
    private mutating func readLength() throws(RecordDecodingError) -> Int {
        var length = 0
        for shift in stride(from: 0, to: 28, by: 7) {
            let byte = try readByte()
            length |= Int(byte & 0x7F) << shift
            if byte & 0x80 == 0 {
                guard byte != 0 || shift == 0 else {
                    throw RecordDecodingError(reason: "a length is not in its shortest form before byte \(offset)")
                }
                return length
            }
        }
        throw RecordDecodingError(reason: "a length is longer than 4 bytes at byte \(offset)")
    }

    private func ended(_ what: String) -> RecordDecodingError {
        RecordDecodingError(reason: "the bytes end at \(offset) where \(what) was expected")
    }
}
