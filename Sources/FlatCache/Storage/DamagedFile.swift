/// A data file that failed its check, as a load or ``ChatCache/verify(repair:progress:)``
/// reported it to ``Configuration/onDamagedFile``.
///
/// ```swift
/// configuration.onDamagedFile = { file in
///     analytics.record("cache-damaged", ["file": file.path, "problem": file.problem])
/// }
/// ```
public struct DamagedFile: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The data file's path inside the cache folder, such as `messages/<key>.lines`.
    public let path: String
    /// Why it cannot be trusted: its sidecar, its Base64, a record, or what stands in its place.
    public let problem: String
    /// Where it was moved, inside the cache folder (`quarantine/<incident>`);
    /// `nil` when it was left in place (a read-only cache).
    public let movedTo: String?

    /// A damaged file with the given facts.
    ///
    /// - Parameters:
    ///   - path: The data file's path inside the cache folder.
    ///   - problem: Why it cannot be trusted.
    ///   - movedTo: Where it was moved inside the cache folder, or `nil`.
    public init(path: String, problem: String, movedTo: String?) {
        self.path = path
        self.problem = problem
        self.movedTo = movedTo
    }

    /// `path: problem`, and where it was moved.
    public var description: String {
        "\(path): \(problem)" + (movedTo.map { "; moved to \($0)" } ?? "")
    }
}
