import FlatCache
import Foundation

/// Where the last walks through `/messages` stopped, so that the next page
/// of the same room in the same direction resumes there: one request a
/// page instead of three (`/timestamp_to_event`, `/context`, `/messages`).
///
/// A walk is remembered under the time the next page will be asked from: a
/// collection asks for the page before its oldest message's millisecond
/// plus one, or after its newest's minus one. What is remembered is the
/// token to walk on from and the messages the walk met. Entries are kept for ``maxAge`` and at most ``capacity`` of
/// them; a page asked from any other time walks afresh.
actor WalkResumes {
    /// Where one walk stopped.
    struct Resume: Sendable {
        /// The `/messages` token to walk on from; `nil` when the walk reached the timeline's end.
        var token: String?
        /// Every message the walk met, the page it returned included: the
        /// next page is asked from that page's farthest millisecond, whose
        /// messages it must return again.
        var walked: [MatrixMessage]
        /// When it was remembered.
        var at: ContinuousClock.Instant
    }

    private struct Key: Hashable {
        var roomID: String
        var backward: Bool
        var timestamp: Int64
    }

    static let maxAge = Duration.seconds(60)
    static let capacity = 32

    private var resumes = [Key: Resume]()

    /// The walk that stopped where a page of `roomID` toward `direction` from `timestamp` begins.
    func resume(_ roomID: String, _ direction: PageDirection, from timestamp: Int64) -> Resume? {
        let key = Key(roomID: roomID, backward: direction == .before, timestamp: timestamp)
        guard let resume = resumes[key] else { return nil }
        guard ContinuousClock.now - resume.at < Self.maxAge else {
            resumes[key] = nil
            return nil
        }
        return resume
    }

    /// Remembers that the next page of `roomID` toward `direction`, asked
    /// from `timestamp`, starts with the messages `walked`, then walks on from `token`.
    func remember(_ roomID: String, _ direction: PageDirection, from timestamp: Int64, token: String?, walked: [MatrixMessage]) {
        if resumes.count >= Self.capacity, let oldest = resumes.min(by: { $0.value.at < $1.value.at })?.key {
            resumes[oldest] = nil
        }
        let key = Key(roomID: roomID, backward: direction == .before, timestamp: timestamp)
        resumes[key] = Resume(token: token, walked: walked, at: .now)
    }
}
