/// A room event as the client-server API sends it, with the fields the
/// adapter reads. Decoding is lenient: a field of an unexpected type reads as
/// missing, so one odd event never fails a whole page.
public struct MatrixEvent: Decodable, Sendable {
    /// The event's id (`$…`); empty when the server sent none.
    public var eventID: String
    /// The event type, such as `m.room.message` or `m.room.redaction`.
    public var type: String
    /// The sender's user id.
    public var sender: String
    /// The server's time for the event, in milliseconds since 1970.
    public var originServerTS: Int64
    /// The room the event belongs to, when the endpoint says (`/messages` does, `/sync` does not).
    public var roomID: String?
    /// The state key of a state event; `nil` for other events.
    public var stateKey: String?
    /// The content fields the adapter reads.
    public var content: Content
    /// The event a redaction removes (`redacts` at the top level up to room
    /// version 10, in the content from version 11).
    public var redacts: String?
    /// Whether the event was redacted (`unsigned.redacted_because`).
    public var isRedacted: Bool
    /// The newest edit the server bundled with the event (`unsigned.m.relations.m.replace`).
    public var replacement: Replacement?
    /// The transaction id the event was sent with (`unsigned.transaction_id`):
    /// the server says it only to the access token (the device) that sent
    /// the event, in `/sync`, `/messages` and `/event` alike. FlatCache sends
    /// an outbox entry's request id as the transaction id, so this matches the
    /// echo of a message sent through ``MatrixSource/send(_:requestID:)``.
    public var transactionID: String?

    /// The content fields the adapter reads.
    public struct Content: Decodable, Sendable {
        /// A message's text.
        public var body: String?
        /// A message's kind: `m.text`, `m.notice`, `m.emote`, `m.image`…
        public var msgtype: String?
        /// An edit's new content (`m.new_content`).
        public var newContent: NewContent?
        /// The relation, such as an edit's `rel_type: m.replace` and the event it edits.
        public var relation: Relation?
        /// A redaction's target (room version 11).
        public var redacts: String?
        /// `m.room.name`'s name.
        public var name: String?
        /// `m.room.avatar`'s image URL.
        public var url: String?
        /// `m.room.member`'s membership: `join`, `leave`, `invite`, `ban`.
        public var membership: String?
        /// `m.room.member`'s display name.
        public var displayName: String?

        enum CodingKeys: String, CodingKey {
            case body, msgtype, name, url, membership, redacts
            case newContent = "m.new_content"
            case relation = "m.relates_to"
            case displayName = "displayname"
        }

        /// Content with no fields, for an event that has none.
        init() {}

        /// Decodes an event's `content`, leniently: a field of an unexpected
        /// type reads as missing, as clients treat content others wrote.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            body = container.lenient(String.self, .body)
            msgtype = container.lenient(String.self, .msgtype)
            newContent = container.lenient(NewContent.self, .newContent)
            relation = container.lenient(Relation.self, .relation)
            redacts = container.lenient(String.self, .redacts)
            name = container.lenient(String.self, .name)
            url = container.lenient(String.self, .url)
            membership = container.lenient(String.self, .membership)
            displayName = container.lenient(String.self, .displayName)
        }
    }

    /// An edit's new content.
    public struct NewContent: Decodable, Sendable {
        /// The new text.
        public var body: String?
        /// The new kind.
        public var msgtype: String?
    }

    /// `m.relates_to`.
    public struct Relation: Decodable, Sendable {
        /// `m.replace` for an edit.
        public var relType: String?
        /// The event related to.
        public var eventID: String?

        enum CodingKeys: String, CodingKey {
            case relType = "rel_type"
            case eventID = "event_id"
        }
    }

    /// The newest edit bundled with an event.
    public struct Replacement: Decodable, Sendable {
        /// The edit event's id.
        public var eventID: String?
        /// When the edit was made, in milliseconds since 1970.
        public var originServerTS: Int64?
        /// The edit's content.
        public var content: Content?

        enum CodingKeys: String, CodingKey {
            case eventID = "event_id"
            case originServerTS = "origin_server_ts"
            case content
        }
    }

    enum CodingKeys: String, CodingKey {
        case eventID = "event_id"
        case type, sender, content, redacts, unsigned
        case originServerTS = "origin_server_ts"
        case roomID = "room_id"
        case stateKey = "state_key"
    }

    private struct Unsigned: Decodable {
        var redactedBecause: Bool
        var relations: Relations?
        var transactionID: String?

        struct Relations: Decodable {
            var replace: Replacement?
            enum CodingKeys: String, CodingKey { case replace = "m.replace" }
        }

        enum CodingKeys: String, CodingKey {
            case redactedBecause = "redacted_because"
            case relations = "m.relations"
            case transactionID = "transaction_id"
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            redactedBecause = container.contains(.redactedBecause)
            relations = container.lenient(Relations.self, .relations)
            transactionID = container.lenient(String.self, .transactionID).flatMap { $0.isEmpty ? nil : $0 }
        }
    }

    /// Decodes a client-server API event leniently: a missing or mistyped
    /// field reads as empty or absent, so one odd event never fails a page.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        eventID = container.lenient(String.self, .eventID) ?? ""
        type = container.lenient(String.self, .type) ?? ""
        sender = container.lenient(String.self, .sender) ?? ""
        originServerTS = container.lenient(Int64.self, .originServerTS) ?? 0
        roomID = container.lenient(String.self, .roomID)
        stateKey = container.lenient(String.self, .stateKey)
        content = container.lenient(Content.self, .content) ?? Content()
        let unsigned = container.lenient(Unsigned.self, .unsigned)
        isRedacted = unsigned?.redactedBecause ?? false
        replacement = unsigned?.relations?.replace
        transactionID = unsigned?.transactionID
        redacts = container.lenient(String.self, .redacts) ?? content.redacts
    }

    // MARK: - What the event means to a cache

    /// The event an edit replaces, when this is an edit (`rel_type: m.replace`).
    public var editedEventID: String? {
        guard type == "m.room.message", content.relation?.relType == "m.replace" else { return nil }
        return content.relation?.eventID
    }

    /// Whether this is a message a chat view shows: an `m.room.message`
    /// that is not an edit and not redacted.
    public var isShownMessage: Bool {
        type == "m.room.message" && editedEventID == nil && !isRedacted && !eventID.isEmpty
    }

    /// The message this event is, in `roomID`, with its newest bundled edit
    /// applied and its ``transactionID`` as the request id; `nil` unless ``isShownMessage``.
    public func message(in roomID: String) -> MatrixMessage? {
        guard isShownMessage else { return nil }
        var message = MatrixMessage(
            eventID: eventID, roomID: self.roomID ?? roomID, sender: sender, createdAt: originServerTS,
            msgtype: content.msgtype ?? "", body: content.body ?? "", requestID: transactionID)
        if let edit = replacement, let newContent = edit.content?.newContent {
            message.apply(editBody: newContent.body, msgtype: newContent.msgtype, at: edit.originServerTS ?? originServerTS)
        }
        return message
    }
}

extension KeyedDecodingContainer {
    /// The value, or `nil` when it is missing, `null` or of another type.
    func lenient<T: Decodable>(_ type: T.Type, _ key: Key) -> T? {
        (try? decodeIfPresent(type, forKey: key)) ?? nil
    }
}
