public import Foundation

/// A `Codable` record serialized as compact JSON with sorted keys, so equal
/// values always give equal bytes.
///
/// Conform a `Codable` type to get ``CacheRecord`` for free:
///
/// ```swift
/// struct Reaction: Codable, JSONCacheRecord { var emoji: String; var count: Int }
/// ```
public protocol JSONCacheRecord: CacheRecord, Codable {}

extension JSONCacheRecord {
    /// The record as compact JSON, keys sorted, slashes unescaped.
    ///
    /// - Throws: `EncodingError` when a value cannot be encoded (a non-finite `Double`, say).
    public func serialize() throws -> Data {
        try JSONRecordCoding.encoder.encode(self)
    }

    /// Decodes a record from JSON made by ``serialize()``.
    ///
    /// - Throws: `DecodingError` when the bytes are not such JSON.
    public init(serializedData: Data) throws {
        self = try JSONRecordCoding.decoder.decode(Self.self, from: serializedData)
    }
}

/// The shared coders: configured once, safe to use from any thread.
enum JSONRecordCoding {
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }()

    static let decoder = JSONDecoder()
}
