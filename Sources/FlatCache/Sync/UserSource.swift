/// What an app implements over its chat server so that a ``UserDirectory``
/// can fetch the profiles it is missing: one call for a batch of user ids.
///
/// ```swift
/// struct ServerUsers: UserSource {
///     func users(withIDs userIDs: [String]) async throws -> [ChatUser] {
///         try await api.fetchUsers(userIDs)
///     }
/// }
/// ```
public protocol UserSource<User>: Sendable {
    /// The user record type the source returns.
    associatedtype User: UserRecord

    /// The profiles of the users with these ids, as the server has them now.
    ///
    /// Ids the server does not know are left out of the answer. Called with
    /// each id at most once per call, and never with an empty list.
    /// - Parameter userIDs: The ids to fetch, without repeats.
    /// - Returns: The users found, in any order.
    /// - Throws: Whatever the server or the network throws; the directory
    ///   reports it as ``FlatCacheError/sourceFailed(operation:underlying:)``.
    func users(withIDs userIDs: [String]) async throws -> [User]
}
