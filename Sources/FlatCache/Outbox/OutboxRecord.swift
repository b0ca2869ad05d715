import Foundation

/// One line of `outbox.lines`: an entry's state when it was written (see
/// `docs/format.md`, "Outbox"). The file is a log: the last line of a
/// request id is the entry's state, a `sent` or `cancelled` line says it left.
struct OutboxRecord<Message: MessageRecord>: CacheRecord {
    /// The line format's version.
    static var version: UInt8 { 1 }

    /// The state byte of a line.
    enum Kind: UInt8 {
        case pending = 0, sending = 1, failed = 2, sent = 3, cancelled = 4
    }

    var requestID: String
    var channelURL: String
    var queuedAt: Int64
    var kind: Kind
    var attempts: Int64
    /// Why it failed for good (``Kind/failed``), or the last failure that retrying can help.
    var reason: String
    var message: Message
    /// The server's copy, on a ``Kind/sent`` line.
    var serverMessage: Message?

    static var recordTypeName: String { "FlatCache.OutboxRecord" }

    init(_ entry: OutboxEntry<Message>, kind: Kind? = nil, serverMessage: Message? = nil) {
        requestID = entry.requestID
        channelURL = entry.channelURL
        queuedAt = entry.queuedAt
        attempts = Int64(entry.attempts)
        message = entry.message
        self.serverMessage = serverMessage
        switch entry.state {
        case .pending: (self.kind, reason) = (.pending, entry.lastFailure ?? "")
        case .sending: (self.kind, reason) = (.sending, entry.lastFailure ?? "")
        case .failed(let why, _): (self.kind, reason) = (.failed, why)
        case .sent: (self.kind, reason) = (.sent, "")
        }
        if let kind { self.kind = kind }
    }

    /// The entry this line describes; `nil` for a cancelled one, or a sent one whose copy is missing.
    var entry: OutboxEntry<Message>? {
        let state: OutboxEntry<Message>.State
        switch kind {
        case .pending: state = .pending
        case .sending: state = .sending
        case .failed: state = .failed(reason: reason, attempts: Int(attempts))
        case .sent:
            guard let serverMessage else { return nil }
            state = .sent(serverID: serverMessage.messageID)
        case .cancelled: return nil
        }
        let failure = kind == .failed || reason.isEmpty ? nil : reason
        return OutboxEntry(
            requestID: requestID, message: message, queuedAt: queuedAt, state: state, attempts: Int(attempts),
            lastFailure: failure)
    }

    func serialize() throws -> Data {
        var writer = BinaryWriter(capacity: 64 + requestID.utf8.count + channelURL.utf8.count + reason.utf8.count)
        writer.write(Self.version)
        try writer.write(requestID, field: "requestID")
        try writer.write(channelURL, field: "channelURL")
        writer.write(queuedAt)
        writer.write(kind.rawValue)
        writer.write(attempts)
        try writer.write(reason, field: "reason")
        try writer.write(try message.serialize(), field: "message")
        try writer.write(try serverMessage?.serialize() ?? Data(), field: "serverMessage")
        return writer.data
    }

    init(serializedData: Data) throws {
        let fields = try BinaryReader.read(serializedData) { reader throws(RecordDecodingError) in
            try reader.readVersion(Self.version, of: "OutboxRecord")
            let requestID = try reader.readString()
            guard !requestID.isEmpty else { throw RecordDecodingError(reason: "an outbox line has an empty request id") }
            let channelURL = try reader.readString()
            let queuedAt = try reader.readInt64()
            let byte = try reader.readByte()
            guard let kind = Kind(rawValue: byte) else {
                throw RecordDecodingError(reason: "\(byte) is not an outbox state (0...4)")
            }
            let attempts = try reader.readInt64()
            let reason = try reader.readString()
            return (requestID, channelURL, queuedAt, kind, attempts, reason, try reader.readBytes(), try reader.readBytes())
        }
        (requestID, channelURL, queuedAt, kind, attempts, reason) = (fields.0, fields.1, fields.2, fields.3, fields.4, fields.5)
        message = try Message(serializedData: fields.6)
        guard message.channelURL == channelURL else {
            throw RecordDecodingError(reason: "an outbox line's message is in another channel than the line says")
        }
        serverMessage = fields.7.isEmpty ? nil : try Message(serializedData: fields.7)
        if kind == .sent, serverMessage == nil {
            throw RecordDecodingError(reason: "a sent outbox line has no server message")
        }
    }
}
