public import Foundation

/// Where the cache's policies get the time: when a channel was saved and
/// used, and so when it expires (``Configuration/maxAge``) and which channel
/// a size sweep removes first (``Configuration/sizeLimit``).
///
/// The default is the system clock. Tests inject their own, so that a
/// channel can be made a week old without waiting a week:
///
/// ```swift
/// var configuration = Configuration()
/// let start = Date()
/// configuration.clock = CacheClock { start.addingTimeInterval(7 * 86_400) }  // a week later
/// ```
public struct CacheClock: Sendable {
    /// The current time.
    public let now: @Sendable () -> Date

    /// A clock that asks `now` for the time.
    ///
    /// - Parameter now: Called on any thread, often: keep it cheap and never block in it.
    public init(_ now: @escaping @Sendable () -> Date) {
        self.now = now
    }

    /// The system's clock (`Date()`).
    public static let system = CacheClock { Date() }

    /// The current time in milliseconds since 1970, as the cache records it
    /// (``MessageRecord/createdAt`` counts the same way).
    public var milliseconds: Int64 { now().millisecondsSince1970 }
}

extension Duration {
    /// The whole milliseconds in this duration, `Int64.max` when more.
    var saturatingMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000)
        return overflow ? .max : whole.addingReportingOverflow(attoseconds / 1_000_000_000_000_000).partialValue
    }
}
