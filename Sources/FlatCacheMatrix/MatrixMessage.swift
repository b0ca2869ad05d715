public import FlatCache

/// A Matrix room message as FlatCache keeps it: an `m.room.message` event,
/// with its newest edit applied. Its id is the event id (a `String`); its
/// channel is the room. Stored as compact JSON with sorted keys
/// (`JSONCacheRecord`); a message with no ``requestID`` has no
/// `requestID` key, so its bytes are the ones made before the field existed,
/// and those bytes read as a message without one.
///
/// ```swift
/// let message = MatrixMessage(eventID: "$abc", roomID: "!room:example.org", sender: "@mina:example.org",
///                             createdAt: 1_700_000_000_000, msgtype: "m.text", body: "Hello")
/// ```
public struct MatrixMessage: MessageRecord, JSONCacheRecord, Hashable {
    /// The event id, such as `$Hn2…`.
    public var eventID: String
    /// The room id, such as `!abc:example.org`.
    public var roomID: String
    /// The sender's user id, such as `@mina:example.org`.
    public var sender: String
    /// The event's `origin_server_ts`: milliseconds since 1970.
    public var createdAt: Int64
    /// When the newest edit was made, in milliseconds since 1970; 0 if never edited.
    public var editedAt: Int64
    /// The message kind: `m.text`, `m.notice`, `m.emote`, `m.image`…
    public var msgtype: String
    /// The text (an image's file name, for media), after the newest edit.
    public var body: String
    /// The transaction id the message was sent with (`unsigned.transaction_id`),
    /// which is the request id of the outbox entry that sent it; the server
    /// tells it only to the access token that sent the message, so `nil` for
    /// other senders' messages (and for messages read with another token).
    public var requestID: String?

    /// A message with these fields.
    public init(
        eventID: String, roomID: String, sender: String, createdAt: Int64, editedAt: Int64 = 0,
        msgtype: String, body: String, requestID: String? = nil
    ) {
        self.eventID = eventID
        self.roomID = roomID
        self.sender = sender
        self.createdAt = createdAt
        self.editedAt = editedAt
        self.msgtype = msgtype
        self.body = body
        self.requestID = requestID
    }

    /// The event id.
    public var messageID: String { eventID }
    /// The room id.
    public var channelURL: String { roomID }
    /// Whether the message was edited.
    public var isEdited: Bool { editedAt != 0 }
    /// Its ``body`` (after the newest edit): what search finds it by; `nil`
    /// when there is none, as for a redacted event, whose content the server strips.
    public var searchableText: String? { body.isEmpty ? nil : body }
    /// Its ``sender``: what a search's `SearchFilter.senderIDs` matches.
    public var senderID: String? { sender.isEmpty ? nil : sender }

    /// A fixed name, so that folders stay readable if the module is renamed.
    public static var recordTypeName: String { "FlatCacheMatrix.MatrixMessage/1" }

    /// Applies an edit's new content (`m.new_content`) made at `time`.
    mutating func apply(editBody: String?, msgtype: String?, at time: Int64) {
        if let editBody { body = editBody }
        if let msgtype { self.msgtype = msgtype }
        editedAt = max(time, 1)
    }
}

/// A joined Matrix room as FlatCache keeps it in the channel list.
public struct MatrixRoom: ChannelRecord, JSONCacheRecord, Hashable {
    /// The room id, such as `!abc:example.org`.
    public var roomID: String
    /// The room's name (`m.room.name`), else its canonical alias, else the
    /// other members' names, else the room id.
    public var name: String
    /// The room's avatar (`m.room.avatar`), an `mxc://` URL; empty if none.
    public var avatarURL: String
    /// How many members have joined.
    public var joinedMemberCount: Int
    /// When the room was created (its `m.room.create` event), in milliseconds since 1970.
    public var createdAt: Int64
    /// The newest message, if the room has one.
    public var lastMessage: MatrixMessage?

    /// A room with these fields.
    public init(
        roomID: String, name: String, avatarURL: String = "", joinedMemberCount: Int, createdAt: Int64,
        lastMessage: MatrixMessage? = nil
    ) {
        self.roomID = roomID
        self.name = name
        self.avatarURL = avatarURL
        self.joinedMemberCount = joinedMemberCount
        self.createdAt = createdAt
        self.lastMessage = lastMessage
    }

    /// The room id.
    public var channelURL: String { roomID }
    /// `true`: every joined room is cached.
    public var isGroupChannel: Bool { true }
    /// The newest message's time, else the room's creation.
    public var lastMessageAt: Int64 { lastMessage?.createdAt ?? createdAt }

    /// A fixed name, so that folders stay readable if the module is renamed.
    public static var recordTypeName: String { "FlatCacheMatrix.MatrixRoom/1" }
}
