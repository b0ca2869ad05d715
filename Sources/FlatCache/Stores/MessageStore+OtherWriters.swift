import Foundation

/// What a replace waiting for write-behind keeps of other writers' saves.
///
/// A synchronous `replace(_:in:)` is written when it is made, and whatever
/// another instance or process saves afterwards goes over it. An `async`
/// replace (and a save into an expired channel, which starts it afresh) is
/// written later; the engine keeps what the file held when it was made
/// (``Change/base``), and when the write finds the file changed since, it
/// applies here what the other writers did over the replace's messages, so
/// that both forms give the same result.
extension MessageStore {
    /// The rebase of a change that replaces a channel's messages (see ``Change/rebase``).
    var rebase: @Sendable (_ result: [Message]?, _ then: [Message]?, _ now: [Message]?, _ dropped: inout Int) -> [Message]? {
        let limit = maxPerChannel
        return { result, then, now, dropped in Self.rebased(result, then: then, now: now, limit: limit, dropped: &dropped) }
    }

    /// `result` with what other writers did to the file between `then` and
    /// `now` (its records when the replace was made and when it is written,
    /// the newest `limit` of each, as loads show them): the messages they
    /// wrote (not in the file then, or with other bytes) upserted, and the
    /// ones they removed left out, except those older than every message the
    /// file shows now while it shows `limit` of them (retention dropped
    /// them; the replace's own retention decides). A file removed since
    /// leaves `result` as it is. Then the newest `limit` are kept.
    static func rebased(
        _ result: [Message]?, then: [Message]?, now: [Message]?, limit: Int, dropped: inout Int
    ) -> [Message]? {
        guard let now else { return result }
        var ignored = 0
        let before = shown(then ?? [], limit: limit, dropped: &ignored)
        let after = shown(now, limit: limit, dropped: &ignored)
        var bytesBefore = [Message.MessageID: Data?](minimumCapacity: before.count)
        for message in before { bytesBefore[message.messageID] = try? message.serialize() }
        let written = after.filter { message in
            guard let old = bytesBefore[message.messageID] else { return true }
            return old != (try? message.serialize())
        }
        let present = Set(after.lazy.map(\.messageID))
        let full = after.count >= limit
        let removed = Set(before.lazy.filter { message in
            guard !present.contains(message.messageID) else { return false }
            if full, let oldest = after.first, CanonicalOrder.precedes(message, oldest) { return false }
            return true
        }.map(\.messageID))
        guard !written.isEmpty || !removed.isEmpty else { return result }
        let merged = upserting(written, into: result ?? []).filter { !removed.contains($0.messageID) }
        return retained(merged, limit: limit, dropped: &dropped)
    }
}
