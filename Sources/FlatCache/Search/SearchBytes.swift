/// Search reads text as its UTF-8 bytes: a `String` is valid UTF-8, so a scalar
/// is decoded from its bytes without the checks `String.Index` makes at each step.
enum SearchBytes {
    /// Calls `body` with `text`'s UTF-8 bytes, made contiguous first if they were not (a bridged string).
    static func with<T>(_ text: String, _ body: (UnsafeBufferPointer<UInt8>) -> T) -> T {
        if let result = text.utf8.withContiguousStorageIfAvailable(body) { return result }
        var copy = text
        copy.makeContiguousUTF8()
        return copy.utf8.withContiguousStorageIfAvailable(body)!
    }

    /// The scalar whose UTF-8 starts at `index` in `bytes`; moves `index` past it.
    ///
    /// - Precondition: `bytes` are valid UTF-8 (a `String`'s) and `index` is at a scalar's first byte.
    @inline(__always)
    static func scalar(in bytes: UnsafeBufferPointer<UInt8>, at index: inout Int) -> Unicode.Scalar {
        let lead = UInt32(bytes[index])
        if lead < 0x80 {
            index += 1
            return Unicode.Scalar(UInt8(lead))
        }
        let value: UInt32
        if lead < 0xE0 {
            value = (lead & 0x1F) << 6 | UInt32(bytes[index + 1] & 0x3F)
            index += 2
        } else if lead < 0xF0 {
            value = (lead & 0x0F) << 12 | UInt32(bytes[index + 1] & 0x3F) << 6 | UInt32(bytes[index + 2] & 0x3F)
            index += 3
        } else {
            value =
                (lead & 0x07) << 18 | UInt32(bytes[index + 1] & 0x3F) << 12 | UInt32(bytes[index + 2] & 0x3F) << 6
                | UInt32(bytes[index + 3] & 0x3F)
            index += 4
        }
        return Unicode.Scalar(value)!
    }
}
