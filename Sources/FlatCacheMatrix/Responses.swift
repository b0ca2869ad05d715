/// The JSON answers of the endpoints the adapter calls, with the fields it reads.

/// `GET /rooms/{roomId}/messages`.
struct MessagesResponse: Decodable, Sendable {
    var chunk: [MatrixEvent]
    var start: String?
    var end: String?
}

/// `GET /rooms/{roomId}/context/{eventId}`.
struct ContextResponse: Decodable, Sendable {
    var start: String?
    var end: String?
}

/// `GET /rooms/{roomId}/timestamp_to_event` (v1).
struct TimestampResponse: Decodable, Sendable {
    var eventID: String
    enum CodingKeys: String, CodingKey { case eventID = "event_id" }
}

/// `GET /sync`.
struct SyncResponse: Decodable, Sendable {
    var nextBatch: String
    var rooms: Rooms?

    struct Rooms: Decodable, Sendable {
        var join: [String: JoinedRoom]?
        var leave: [String: LeftRoom]?
    }

    struct JoinedRoom: Decodable, Sendable {
        var timeline: Timeline?
        var state: Events?
    }

    struct LeftRoom: Decodable, Sendable {}

    struct Timeline: Decodable, Sendable {
        var events: [MatrixEvent]?
        var limited: Bool?
        var prevBatch: String?
        enum CodingKeys: String, CodingKey {
            case events, limited
            case prevBatch = "prev_batch"
        }
    }

    struct Events: Decodable, Sendable {
        var events: [MatrixEvent]?
    }

    enum CodingKeys: String, CodingKey {
        case nextBatch = "next_batch"
        case rooms
    }

    /// The joined rooms, by id.
    var joined: [String: JoinedRoom] { rooms?.join ?? [:] }
    /// The ids of the rooms left (or banned from) since the token.
    var left: [String] { Array((rooms?.leave ?? [:]).keys) }
}

/// `GET /joined_rooms`.
struct JoinedRoomsResponse: Decodable, Sendable {
    var joinedRooms: [String]
    enum CodingKeys: String, CodingKey { case joinedRooms = "joined_rooms" }
}

/// `GET /rooms/{roomId}/joined_members`.
struct JoinedMembersResponse: Decodable, Sendable {
    var joined: [String: Member]
    struct Member: Decodable, Sendable {
        var displayName: String?
        enum CodingKeys: String, CodingKey { case displayName = "display_name" }
    }
}

/// `GET /profile/{userId}`.
struct ProfileResponse: Decodable, Sendable {
    var displayName: String?
    var avatarURL: String?
    enum CodingKeys: String, CodingKey {
        case displayName = "displayname"
        case avatarURL = "avatar_url"
    }
}

/// `GET /account/whoami`.
struct WhoAmIResponse: Decodable, Sendable {
    var userID: String
    var deviceID: String?
    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case deviceID = "device_id"
    }
}

/// An answer whose fields are not read (`PUT` of a profile field).
struct EmptyResponse: Decodable, Sendable {}

/// `PUT /rooms/{roomId}/send/{eventType}/{txnId}`.
struct SendResponse: Decodable, Sendable {
    var eventID: String
    enum CodingKeys: String, CodingKey { case eventID = "event_id" }
}
