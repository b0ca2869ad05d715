public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// A small client for the Matrix client-server API (v3) over `URLSession`:
/// authenticated JSON requests, Matrix errors as ``MatrixError``, and
/// `M_LIMIT_EXCEEDED` retried after the wait the server asks for.
///
/// ```swift
/// struct JoinedRooms: Decodable { var joined_rooms: [String] }
/// let client = try MatrixClient(homeserver: homeserver, accessToken: accessToken)
/// let rooms: JoinedRooms = try await client.get(["joined_rooms"])
/// ```
public struct MatrixClient: Sendable {
    /// The homeserver's base URL, such as `https://matrix.example.org`.
    public let homeserver: URL
    /// The access token sent as `Authorization: Bearer`; `nil` before logging in.
    public let accessToken: String?
    /// How many times a request answered `M_LIMIT_EXCEEDED` is sent again
    /// (after the server's `retry_after_ms`, at most ``maxRateLimitWait`` each) before it throws.
    public var maxRateLimitRetries = 5
    /// The longest wait between rate-limited retries, in seconds.
    public var maxRateLimitWait: Double = 10
    /// How long a request may take, from sending to its whole answer, before
    /// it fails as ``MatrixError/unreachable(url:reason:)``, in seconds; a
    /// long-polling `/sync` adds its own timeout to this. It is a deadline,
    /// not an idle timeout: a server that trickles bytes is cut off at it.
    /// A cancelled task's request ends at once, as
    /// ``MatrixError/unreachable(url:reason:)`` with the reason `cancelled`.
    public var requestTimeout: Double = 30

    private let session: URLSession

    /// A client for `homeserver`.
    ///
    /// - Parameters:
    ///   - homeserver: An `http` or `https` URL.
    ///   - accessToken: From ``MatrixAccount/login(homeserver:user:password:deviceName:configuration:)``, or `nil`.
    ///   - configuration: The URLSession's configuration; ephemeral by default.
    ///     Its `httpMaximumConnectionsPerHost` bounds the connections open to the homeserver.
    ///     Its `urlCache` is never used: the client keeps a copy without one, so no HTTP answer is
    ///     stored or read back. (On Linux, a session with a `URLCache` traps the whole process when
    ///     a request is cancelled as its connection fails: a FoundationNetworking bug.)
    /// - Throws: ``MatrixError/invalidArgument(_:)`` for another kind of URL.
    public init(
        homeserver: URL, accessToken: String?, configuration: URLSessionConfiguration = MatrixClient.defaultConfiguration
    ) throws(MatrixError) {
        guard let scheme = homeserver.scheme?.lowercased(), ["http", "https"].contains(scheme), homeserver.host != nil else {
            throw .invalidArgument("the homeserver URL must be http:// or https:// with a host, not '\(homeserver.absoluteString)'")
        }
        var base = homeserver.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        let uncached = configuration.copy() as? URLSessionConfiguration ?? configuration
        uncached.urlCache = nil
        self.init(homeserver: URL(string: base) ?? homeserver, accessToken: accessToken, session: URLSession(configuration: uncached))
    }

    private init(homeserver: URL, accessToken: String?, session: URLSession) {
        self.homeserver = homeserver
        self.accessToken = accessToken
        self.session = session
    }

    /// The configuration a client uses unless given another: ephemeral, without a `URLCache`, never reading a cached answer.
    public static var defaultConfiguration: URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        return configuration
    }

    /// A `GET` of `/_matrix/client/<version>/<path…>` with `query`, decoded as `Response`.
    ///
    /// - Parameters:
    ///   - path: The path's segments after the version, each percent-encoded here (room and event ids may hold `!`, `$`, `:`).
    ///   - query: Query parameters, percent-encoded here.
    ///   - version: `v3` unless the endpoint lives elsewhere (`v1` for `/timestamp_to_event`).
    ///   - extraTimeout: Seconds added to ``requestTimeout`` (a long poll).
    /// - Throws: ``MatrixError``.
    public func get<Response: Decodable>(
        _ path: [String], query: [(String, String)] = [], version: String = "v3", extraTimeout: Double = 0
    ) async throws(MatrixError) -> Response {
        try await send("GET", path, query: query, body: nil, version: version, extraTimeout: extraTimeout)
    }

    /// A `POST` of `body` as JSON, with `query`, decoded as `Response`.
    ///
    /// - Throws: ``MatrixError``.
    public func post<Body: Encodable, Response: Decodable>(
        _ path: [String], query: [(String, String)] = [], body: Body, version: String = "v3"
    ) async throws(MatrixError) -> Response {
        try await send("POST", path, query: query, body: encode(body), version: version, extraTimeout: 0)
    }

    /// A `PUT` of `body` as JSON, with `query` (an application service's
    /// `user_id` and `ts`, say), decoded as `Response`.
    ///
    /// - Throws: ``MatrixError``.
    public func put<Body: Encodable, Response: Decodable>(
        _ path: [String], query: [(String, String)] = [], body: Body, version: String = "v3"
    ) async throws(MatrixError) -> Response {
        try await send("PUT", path, query: query, body: encode(body), version: version, extraTimeout: 0)
    }

    /// The same client with another access token (after logging in).
    public func authenticated(with accessToken: String) -> MatrixClient {
        var copy = MatrixClient(homeserver: homeserver, accessToken: accessToken, session: session)
        copy.maxRateLimitRetries = maxRateLimitRetries
        copy.maxRateLimitWait = maxRateLimitWait
        copy.requestTimeout = requestTimeout
        return copy
    }

    // MARK: - Sending

    private func send<Response: Decodable>(
        _ method: String, _ path: [String], query: [(String, String)], body: Data?, version: String, extraTimeout: Double
    ) async throws(MatrixError) -> Response {
        let url = try url(path, query: query, version: version)
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.timeoutInterval = requestTimeout + extraTimeout
        if let accessToken { request.setValue("Bearer \(accessToken)", forHTTPHeaderField: "Authorization") }
        if let body {
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let shownURL = Self.withoutQuery(url)
        // Bounded: a server that keeps rate limiting ends as an error.
        for attempt in 0...max(0, maxRateLimitRetries) {
            let (data, status) = try await exchange(request, shownURL: shownURL)
            if (200..<300).contains(status) {
                do {
                    return try JSONDecoder().decode(Response.self, from: data)
                } catch {
                    throw .invalidResponse(url: shownURL, reason: "\(error)")
                }
            }
            let failure = ErrorBody.decode(data)
            switch (status, failure.errcode) {
            case (_, "M_LIMIT_EXCEEDED"), (429, _):
                guard attempt < maxRateLimitRetries else { throw .rateLimited(retryAfterMilliseconds: failure.retryAfterMilliseconds) }
                let wait = min(Double(failure.retryAfterMilliseconds ?? 1_000) / 1_000, maxRateLimitWait)
                try? await Task.sleep(for: .seconds(max(wait, 0.05)))
                if Task.isCancelled { throw .unreachable(url: shownURL, reason: "cancelled while waiting out a rate limit") }
            case (401, _), (_, "M_UNKNOWN_TOKEN"), (_, "M_MISSING_TOKEN"):
                throw .unknownToken(softLogout: failure.softLogout)
            default:
                throw .server(
                    status: status, errcode: failure.errcode ?? "HTTP \(status)",
                    message: failure.error ?? String(decoding: data.prefix(200), as: UTF8.self))
            }
        }
        throw .rateLimited(retryAfterMilliseconds: nil)
    }

    private func exchange(_ request: URLRequest, shownURL: String) async throws(MatrixError) -> (Data, Int) {
        do {
            let (data, response) = try await HTTPExchange.data(for: request, in: session, timeout: request.timeoutInterval)
            guard let http = response as? HTTPURLResponse else {
                throw MatrixError.invalidResponse(url: shownURL, reason: "not an HTTP response")
            }
            return (data, http.statusCode)
        } catch let error as MatrixError {
            throw error
        } catch is CancellationError {
            throw .unreachable(url: shownURL, reason: "cancelled")
        } catch {
            throw .unreachable(url: shownURL, reason: Self.reason(error))
        }
    }

    private func url(_ path: [String], query: [(String, String)], version: String) throws(MatrixError) -> URL {
        var text = homeserver.absoluteString + "/_matrix/client/" + version
        for segment in path { text += "/" + Self.percentEncoded(segment) }
        if !query.isEmpty {
            text += "?" + query.map { Self.percentEncoded($0.0) + "=" + Self.percentEncoded($0.1) }.joined(separator: "&")
        }
        guard let url = URL(string: text) else { throw .invalidArgument("cannot make a URL of \(text)") }
        return url
    }

    private func encode(_ body: some Encodable) throws(MatrixError) -> Data {
        do {
            return try JSONEncoder().encode(body)
        } catch {
            throw .invalidArgument("cannot encode the request body: \(error)")
        }
    }

    /// Everything but RFC 3986's unreserved characters is percent-encoded.
    static func percentEncoded(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics.intersection(CharacterSet(charactersIn: Unicode.Scalar(0)..<Unicode.Scalar(128)))
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    /// The URL without its query: access tokens and filters stay out of error messages.
    private static func withoutQuery(_ url: URL) -> String {
        url.absoluteString.split(separator: "?", maxSplits: 1).first.map(String.init) ?? url.absoluteString
    }

    private static func reason(_ error: any Error) -> String {
        if let error = error as? URLError {
            return "\(error.localizedDescription) (URLError \(error.code.rawValue))"
        }
        return "\(error)"
    }
}

/// The body of a Matrix error answer.
struct ErrorBody: Decodable {
    var errcode: String?
    var error: String?
    var retryAfterMilliseconds: Int?
    var softLogout = false

    enum CodingKeys: String, CodingKey {
        case errcode, error
        case retryAfterMilliseconds = "retry_after_ms"
        case softLogout = "soft_logout"
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        errcode = try? container.decodeIfPresent(String.self, forKey: .errcode)
        error = try? container.decodeIfPresent(String.self, forKey: .error)
        retryAfterMilliseconds = try? container.decodeIfPresent(Int.self, forKey: .retryAfterMilliseconds)
        softLogout = (try? container.decodeIfPresent(Bool.self, forKey: .softLogout)) ?? false
    }

    private init() {}

    static func decode(_ data: Data) -> ErrorBody {
        (try? JSONDecoder().decode(ErrorBody.self, from: data)) ?? ErrorBody()
    }
}
