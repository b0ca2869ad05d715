public import Foundation
#if canImport(FoundationNetworking)
public import FoundationNetworking
#endif

/// A logged-in Matrix account: who it is and a client with its access token.
///
/// ```swift
/// let account = try await MatrixAccount.login(homeserver: homeserver, user: "mina", password: password)
/// let source = MatrixSource(client: account.client)
/// ```
public struct MatrixAccount: Sendable {
    /// The user id, such as `@mina:example.org`.
    public let userID: String
    /// The device the access token belongs to, when the server says.
    public let deviceID: String?
    /// A client with the account's access token.
    public let client: MatrixClient

    /// The access token.
    public var accessToken: String { client.accessToken ?? "" }

    /// Logs in with a user name and password (`m.login.password`).
    ///
    /// - Parameters:
    ///   - homeserver: The homeserver's base URL.
    ///   - user: A localpart (`mina`) or a full user id (`@mina:example.org`).
    ///   - password: The password.
    ///   - deviceName: The name the new device shows in the account's sessions.
    ///   - configuration: The client's URLSession configuration (see ``MatrixClient/init(homeserver:accessToken:configuration:)``).
    /// - Throws: ``MatrixError``: `.server(403, "M_FORBIDDEN", …)` for a wrong password.
    public static func login(
        homeserver: URL, user: String, password: String, deviceName: String = "FlatCache",
        configuration: URLSessionConfiguration = MatrixClient.defaultConfiguration
    ) async throws(MatrixError) -> MatrixAccount {
        guard !user.isEmpty else { throw .invalidArgument("the user name is empty") }
        let client = try MatrixClient(homeserver: homeserver, accessToken: nil, configuration: configuration)
        let request = LoginRequest(
            identifier: .init(user: user), password: password, initialDeviceDisplayName: deviceName)
        let response: LoginResponse = try await client.post(["login"], body: request)
        return MatrixAccount(userID: response.userID, deviceID: response.deviceID, client: client.authenticated(with: response.accessToken))
    }

    /// The account an access token belongs to (`/account/whoami`).
    ///
    /// - Parameters:
    ///   - homeserver: The homeserver's base URL.
    ///   - accessToken: The token.
    ///   - configuration: The client's URLSession configuration (see ``MatrixClient/init(homeserver:accessToken:configuration:)``).
    /// - Throws: ``MatrixError/unknownToken(softLogout:)`` for a token the server refuses.
    public static func resume(
        homeserver: URL, accessToken: String, configuration: URLSessionConfiguration = MatrixClient.defaultConfiguration
    ) async throws(MatrixError) -> MatrixAccount {
        guard !accessToken.isEmpty else { throw .invalidArgument("the access token is empty") }
        let client = try MatrixClient(homeserver: homeserver, accessToken: accessToken, configuration: configuration)
        let me: WhoAmIResponse = try await client.get(["account", "whoami"])
        return MatrixAccount(userID: me.userID, deviceID: me.deviceID, client: client)
    }

    private init(userID: String, deviceID: String?, client: MatrixClient) {
        self.userID = userID
        self.deviceID = deviceID
        self.client = client
    }
}

private struct LoginRequest: Encodable {
    var type = "m.login.password"
    var identifier: Identifier
    var password: String
    var initialDeviceDisplayName: String

    struct Identifier: Encodable {
        var type = "m.id.user"
        var user: String
    }

    enum CodingKeys: String, CodingKey {
        case type, identifier, password
        case initialDeviceDisplayName = "initial_device_display_name"
    }
}

private struct LoginResponse: Decodable {
    var userID: String
    var accessToken: String
    var deviceID: String?

    enum CodingKeys: String, CodingKey {
        case userID = "user_id"
        case accessToken = "access_token"
        case deviceID = "device_id"
    }
}
