import FlatCache
import Foundation

/// `liveness <folder> observation ...`: the stores. Each round cancels, at
/// random moments, loops over every store's `observe(...)` stream and the
/// stores' `async` loads, saves, change logs and `flush()`, while writers
/// save messages, channels and users (write-behind on); then every store and
/// `flush()` must still answer.
actor LivenessObservation: LivenessFamily {
    private let world: LivenessWorld
    private let stopwatch: LivenessStopwatch

    init(folder: URL, seed: UInt64, stopwatch: LivenessStopwatch) async throws {
        world = try await LivenessWorld(folder: folder, seed: seed, writers: [.saves, .saves], delivering: false)
        self.stopwatch = stopwatch
    }

    func round(_ number: Int, random: inout XorShift) async throws {
        let cache = world.cache
        let channelURL = LivenessWorld.channelURLs[random.next(3)]
        let message = ChatMessage(
            messageID: Int64(10_000 + number), channelURL: channelURL, createdAt: 50_000 + Int64(number), text: "round \(number)")
        let user = ChatUser(userID: LivenessWorld.userIDs[random.next(40)], nickname: "round \(number)")
        let channel = ChatChannel(channelURL: channelURL, kind: .group, name: "round \(number)", memberCount: 2, createdAt: 1_000)

        var storm = LivenessStorm()
        storm.listen("MessageStore.observe(in:)", count: 1 + random.next(3), &random) { cache.messages.observe(in: channelURL) }
        storm.listen("ChannelStore.observe()", count: 1 + random.next(2), &random) { cache.channels.observe() }
        storm.listen("UserStore.observe()", count: 1 + random.next(2), &random) { cache.users.observe() }
        storm.churn("MessageStore.observe(in:) (churned)", times: 30, &random) { cache.messages.observe(in: channelURL) }
        storm.churn("ChannelStore.observe() (churned)", times: 15, &random) { cache.channels.observe() }
        storm.churn("UserStore.observe() (churned)", times: 15, &random) { cache.users.observe() }
        storm.add("MessageStore.load(in:)", &random) { _ = try await cache.messages.load(in: channelURL) }
        storm.add("MessageStore.loadLatest(in:limit:)", &random) { _ = try await cache.messages.loadLatest(in: channelURL, limit: 10) }
        storm.add("MessageStore.load(in:before:limit:)", &random) {
            _ = try await cache.messages.load(in: channelURL, before: 120_000, limit: 10)
        }
        storm.add("MessageStore.save", &random) { try await cache.messages.save([message]) }
        storm.add("MessageStore.applyChangeLog", &random) {
            try await cache.messages.applyChangeLog(updated: [message], deletedMessageIDs: [message.messageID - 5], in: channelURL)
        }
        storm.add("MessageStore.continuity(in:)", &random) { _ = try await cache.messages.continuity(in: channelURL) }
        storm.add("ChannelStore.load", &random) { _ = try await cache.channels.load() }
        storm.add("ChannelStore.save", &random) { try await cache.channels.save([channel]) }
        storm.add("UserStore.load", &random) { _ = try await cache.users.load() }
        storm.add("UserStore.save", &random) { try await cache.users.save([user]) }
        storm.add("ChatCache.flush", &random) { try await cache.flush() }
        if random.next(10) == 0 { storm.add("MessageStore.removeAll(in:)", &random) { try await cache.messages.removeAll(in: channelURL) } }
        await storm.run(stopwatch)

        // Everything still answers.
        _ = try await stopwatch.answer("MessageStore.load(in:) (after the storm)") { try await cache.messages.load(in: channelURL) }
        _ = try await stopwatch.answer("UserStore.load (after the storm)") { try await cache.users.load() }
        _ = try await stopwatch.answer("ChatCache.flush (after the storm)") { try await cache.flush() }
        try await stopwatch.answer("MessageStore.observe(in:) first value") {
            for try await _ in cache.messages.observe(in: channelURL) { break }
        }
    }

    func finish() async throws {
        await world.stop(stopwatch)
    }
}
