import Foundation
import Testing

@testable import FlatCache
import FlatCacheTesting

/// The `@Observable` models follow what their collection follows: a message
/// or a channel saved through the store by other code reaches the model a
/// SwiftUI view binds to, on the main actor.
@MainActor @Suite struct ModelFollowsStoreTests {
    typealias Cache = ChatCache<ChatMessage, ChatChannel, ChatUser>

    let folder = try! TemporaryFolder()
    let server = SimulatedChatServer()
    let channel = "trip"

    func message(_ id: Int64) -> ChatMessage {
        ChatMessage(messageID: id, channelURL: channel, createdAt: id * 1_000, text: "message \(id)")
    }

    /// Waits (at most 60 s, on the main actor) until `condition` holds: bounded, and generous for a loaded machine.
    func eventually(_ what: String, _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("timed out waiting until \(what)")
                return
            }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    @Test func aMessageSavedThroughTheStoreReachesTheModel() async throws {
        let cache = try await Cache.open(directory: folder.url)
        await server.send((1...3).map { message($0) })
        let model = MessageCollectionModel(try MessageCollection(channelURL: channel, store: cache.messages, source: server))
        await model.start()
        #expect(model.messages.map(\.messageID) == [1, 2, 3])

        try await cache.messages.save([message(99)])

        try await eventually("the saved message is shown") { model.messages.map(\.messageID) == [1, 2, 3, 99] }
        await model.dispose()
    }

    @Test func aChannelSavedThroughTheStoreReachesTheListModel() async throws {
        let cache = try await Cache.open(directory: folder.url)
        await server.update(channels: [Fixtures.channel("a", lastMessageAt: 1_000)])
        let model = ChannelListModel(try ChannelListCollection(store: cache.channels, source: server))
        await model.start()

        try await cache.channels.save([Fixtures.channel("b", lastMessageAt: 2_000)])

        try await eventually("the saved channel is listed") { model.channels.map(\.channelURL) == ["b", "a"] }
        await model.dispose()
    }
}
