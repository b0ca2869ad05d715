import FlatCache
import FlatCacheTesting
import Foundation

/// `liveness <folder> users ...`: the user directory. Each round cancels, at
/// random moments, loops over `UserDirectory.events` and its lookups
/// (`users(withIDs:)`, `cachedUsers(withIDs:)`, `settled()`), while profiles
/// change on the server and in the cache and a 5 ms `maxAge` keeps
/// refreshes going in the background; then the directory must still answer.
/// A new directory every 15 rounds.
actor LivenessUsers: LivenessFamily {
    private let world: LivenessWorld
    private let stopwatch: LivenessStopwatch
    private var directory: UserDirectory<ChatUser>

    init(folder: URL, seed: UInt64, stopwatch: LivenessStopwatch) async throws {
        world = try await LivenessWorld(folder: folder, seed: seed, writers: [.saves, .live], delivering: false)
        self.stopwatch = stopwatch
        directory = Self.directory(world)
    }

    private static func directory(_ world: LivenessWorld) -> UserDirectory<ChatUser> {
        UserDirectory(users: world.cache.users, source: world.server, maxAge: .milliseconds(5))
    }

    /// Up to 8 ids, some of them unknown to the server.
    private static func someIDs(_ random: inout XorShift) -> [String] {
        (0...random.next(8)).map { _ in LivenessWorld.userIDs[random.next(LivenessWorld.userIDs.count)] }
    }

    func round(_ number: Int, random: inout XorShift) async throws {
        await world.setLatency(&random)
        if random.next(6) == 0 { await world.server.failNextCalls(1) }
        if number > 0, number % 15 == 0 {
            let old = directory
            await stopwatch.answer("UserDirectory.settled (replaced)") { await old.settled() }
            directory = Self.directory(world)
        }
        let directory = directory
        let (first, second, cached) = (Self.someIDs(&random), Self.someIDs(&random), Self.someIDs(&random))

        var storm = LivenessStorm()
        storm.listen("UserDirectory.events", count: 2 + random.next(3), &random) { directory.events }
        for _ in 0..<2 { storm.churn("UserDirectory.events (churned)", times: 30, &random) { directory.events } }
        storm.add("UserDirectory.users(withIDs:)", &random) { _ = try await directory.users(withIDs: first) }
        storm.add("UserDirectory.users(withIDs:)", &random) { _ = try await directory.users(withIDs: second) }
        storm.add("UserDirectory.cachedUsers(withIDs:)", &random) { _ = try await directory.cachedUsers(withIDs: cached) }
        storm.add("UserDirectory.settled", &random) { await directory.settled() }
        // Lookups one after another through the storm: background fetches and refreshes keep events coming.
        let many = (0..<20).map { _ in Self.someIDs(&random) }
        let counter = Counter()
        storm.again("UserDirectory.cachedUsers(withIDs:) (again)", times: many.count, &random) {
            _ = try await directory.cachedUsers(withIDs: many[counter.next() % many.count])
        }
        await storm.run(stopwatch)

        // Everything still answers.
        _ = try? await stopwatch.answer("UserDirectory.cachedUsers(withIDs:) (after the storm)") {
            try await directory.cachedUsers(withIDs: first)
        }
        _ = try? await stopwatch.answer("UserDirectory.users(withIDs:) (after the storm)") {
            try await directory.users(withIDs: second)
        }
        await stopwatch.answer("UserDirectory.settled (after the storm)") { await directory.settled() }
    }

    func finish() async throws {
        let directory = directory
        await stopwatch.answer("UserDirectory.settled") { await directory.settled() }
        await world.stop(stopwatch)
    }
}
