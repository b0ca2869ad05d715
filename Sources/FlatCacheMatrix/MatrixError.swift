/// What went wrong talking to a Matrix homeserver. A ``MatrixSource`` throws
/// it from every call; a `MessageCollection` wraps it in
/// `FlatCacheError.sourceFailed` and leaves the cache as it was.
public enum MatrixError: Error, Sendable, CustomStringConvertible {
    /// The homeserver answered with a Matrix error (`errcode` such as
    /// `M_FORBIDDEN` or `M_NOT_FOUND`) and an HTTP status.
    case server(status: Int, errcode: String, message: String)
    /// The access token is not (or no longer) valid: log in again.
    /// `softLogout` is the server's `soft_logout` flag.
    case unknownToken(softLogout: Bool)
    /// The server kept answering `M_LIMIT_EXCEEDED` after every retry the
    /// client's ``MatrixClient/maxRateLimitRetries`` allowed.
    case rateLimited(retryAfterMilliseconds: Int?)
    /// The request did not reach the server or its answer did not come back
    /// (connection refused, timed out, reset): the network or the server is down.
    case unreachable(url: String, reason: String)
    /// The server answered something that is not the JSON the API promises.
    case invalidResponse(url: String, reason: String)
    /// A bad argument: an empty room id, an unsupported homeserver URL.
    case invalidArgument(String)

    /// One line for logs and people.
    public var description: String {
        switch self {
        case .server(let status, let errcode, let message): "the homeserver answered \(status) \(errcode): \(message)"
        case .unknownToken(let softLogout):
            "the access token is not valid\(softLogout ? " (soft logout: log in again as the same device)" : ""): log in again"
        case .rateLimited(let after):
            "the homeserver is rate limiting this client (M_LIMIT_EXCEEDED)\(after.map { ", retry after \($0) ms" } ?? "")"
        case .unreachable(let url, let reason): "could not reach \(url): \(reason)"
        case .invalidResponse(let url, let reason): "\(url) answered something unexpected: \(reason)"
        case .invalidArgument(let reason): reason
        }
    }

    /// The Matrix `errcode`, when the server sent one.
    public var errcode: String? {
        switch self {
        case .server(_, let errcode, _): errcode
        case .unknownToken: "M_UNKNOWN_TOKEN"
        case .rateLimited: "M_LIMIT_EXCEEDED"
        default: nil
        }
    }
}
