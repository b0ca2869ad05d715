import FlatCache
import Foundation

// A second process for the tests.
//
// `flatcache-test-helper upsert <folder> <worker> <count>` upserts `count`
// messages, one save each, into the channel "shared" and into "own-<worker>",
// loading "shared" after every save. Exit status 0 when done, 3 when a load
// came back empty (a file taken for corrupt).
//
// `flatcache-test-helper edit <folder> <worker> <count>` saves `count` messages
// into "shared", then edits or deletes each with a change log of its own,
// flushed each time: two workers append to one file (format 2).
//
// `flatcache-test-helper churn <folder> <seed> <atomic|synchronized>` saves,
// replaces, applies change logs and removes, on 8 channels, until killed.
// Every message it writes is `CrashRecords.message(channel:id:version:)`, so a
// checker can tell a saved record from anything else.
//
// `flatcache-test-helper flush-churn <folder> <seed> <atomic|synchronized> <limit>[:<memory limit>]`
// saves on 6 channels through the `async` API, writing behind, with
// `maxMessagesPerChannel` `limit`, and calls `flush()` now and then, until
// killed: it prints each operation before it starts and `flushed <count>`
// after each flush returns (see `FlushChurn`).
//
// `flatcache-test-helper read <folder> <channel>` opens the cache (read-only
// when it cannot write), prints what it holds and the damaged files it met,
// then tries one save and prints how it failed. For tests run as another user.
//
// `flatcache-test-helper save <folder> <channel> <id>` saves one message
// (`id`, created at `id` * 1,000 ms, text "message <id>") with the
// synchronous API; `delete <folder> <channel> <id>` deletes it through a
// change log; `remove-all-then-save <folder> <channel> <id>` empties the cache
// (`removeAll()`, which deletes `messages/`) and then saves that one message.
// For tests of another process writing between two of theirs.
//
// `flatcache-test-helper search-churn <folder> <seed>` saves, edits and
// deletes messages and searches after each batch, until killed (see `SearchChurn`).
//
// `flatcache-test-helper outbox-churn <folder> <server folder> <run> <count>`
// queues `count` messages in the outbox and delivers them to a server kept in
// a file, printing `accepted <request id>` after each queued (see `OutboxChurn`).
//
// `flatcache-test-helper hold <folder> <seconds>` takes, as another process,
// every lock of the cache folder (what FlatCache's lock stripes lock: bytes
// 0..<64 of `<folder>/format`), prints "holding", sleeps `seconds`, and exits,
// which releases them.
//
// `flatcache-test-helper rekey <folder> <from> <to>` (keys: 64 hex digits or
// `plain`) opens the folder with `from`, prints `changing`, moves it to `to`
// with `rotateKey(to:)` or `migrate(encryption:)`, and prints `changed
// <microseconds>` (see `KeyRotation`). For kills in the middle of a key change.
//
// `flatcache-test-helper liveness <folder> <family> <seed> <rounds|<n>s> [<bound ms>]`
// cancels listeners and calls at random moments while changes flow, and
// checks that each ends within the bound (see `Liveness`).
//
// `flatcache-test-helper cancel-storm <client|raw|refused|refused-raw> <rounds> <requests>`
// cancels `requests` long polls at once as their answers arrive, `rounds`
// times, through `MatrixClient` or `URLSession.data(for:)`, and prints `ok`
// (see `CancelStorm`). A deadlock never ends: the test kills it.
//
// Exit status 2 for bad arguments, 1 for an error.

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("\(message)\n".utf8))
    exit(status)
}

/// Takes an exclusive lock on bytes 0..<64 of the folder's `format` marker
/// (on Linux an open-file-description lock, `F_OFD_SETLKW`; elsewhere the
/// whole file with `flock`, as FlatCache does), prints "holding", sleeps, exits.
func holdEveryLock(of folder: URL, for seconds: Double) -> Never {
    let path = folder.appendingPathComponent("format").path
    let descriptor = open(path, O_RDWR | O_CLOEXEC)
    guard descriptor >= 0 else { fail("hold: cannot open \(path): errno \(errno)", status: 1) }
    #if os(Linux)
    var request = flock()
    request.l_type = Int16(F_WRLCK)
    request.l_whence = Int16(SEEK_SET)
    request.l_start = 0
    request.l_len = 64
    let openFileDescriptionSetLockWait: Int32 = 38  // F_OFD_SETLKW
    while fcntl(descriptor, openFileDescriptionSetLockWait, &request) != 0 {
        if errno != EINTR { fail("hold: cannot lock \(path): errno \(errno)", status: 1) }
    }
    #else
    while flock(descriptor, LOCK_EX) != 0 {
        if errno != EINTR { fail("hold: cannot lock \(path): errno \(errno)", status: 1) }
    }
    #endif
    FileHandle.standardOutput.write(Data("holding\n".utf8))  // unbuffered: the test waits for it
    Thread.sleep(forTimeInterval: seconds)
    exit(0)
}

let arguments = CommandLine.arguments
if arguments.count > 1, arguments[1] == "liveness" { Liveness.start(arguments) }
guard arguments.count == 5 || (arguments.count == 4 && ["read", "hold", "sweep", "search-churn"].contains(arguments[1]))
    || (arguments.count == 6 && ["flush-churn", "outbox-churn"].contains(arguments[1]))
else {
    fail(
        "usage: flatcache-test-helper upsert <folder> <worker> <count> | churn <folder> <seed> <atomic|synchronized>"
            + " | flush-churn <folder> <seed> <atomic|synchronized> <limit>"
            + " | outbox-churn <folder> <server folder> <run> <count>"
            + " | read <folder> <channel> | hold <folder> <seconds> | sweep <folder> <size limit>"
            + " | save <folder> <channel> <id> | delete <folder> <channel> <id> | rekey <folder> <from> <to>"
            + " | cancel-storm <client|raw|refused|refused-raw> <rounds> <requests> | search-churn <folder> <seed>"
            + " | liveness <folder> <family> <seed> <rounds|<n>s> [<bound ms>]", status: 2)
}
let folder = URL(fileURLWithPath: arguments[2])
do {
    switch arguments[1] {
    case "read":
        let damaged = DamagedFiles()
        let cache = try ChatCache(directory: folder, configuration: Configuration(onDamagedFile: damaged.add))
        print("readOnly \(cache.isReadOnly)")
        print("channels \(try cache.channels.blocking.load().count)")
        print("messages \(try cache.messages.blocking.load(in: arguments[3]).count)")
        print("users \(try cache.users.blocking.load().count)")
        for file in damaged.files { print("damaged \(file.path)") }
        do {
            try cache.users.blocking.save([ChatUser(userID: "intruder", nickname: "Intruder")])
            print("save succeeded")
        } catch {
            print("save failed: \(error)")
        }
    case "sweep":
        // Opens with a size limit (which sweeps at open, in the background), sweeps, and prints
        // how many channels this process evicted in all.
        guard let limit = Int(arguments[3]) else { fail("bad size limit", status: 2) }
        let cache = try ChatCache(directory: folder, configuration: Configuration(sizeLimit: limit, sweepTarget: 1))
        Task.detached {
            do {
                try await cache.sweep()
                print("evicted \(try await cache.statistics().evictions)")
                exit(0)
            } catch {
                fail("sweep: \(error)", status: 1)
            }
        }
        dispatchMain()
    case "save", "delete", "remove-all-then-save":
        guard let id = Int64(arguments[4]) else { fail("bad id", status: 2) }
        let cache = try ChatCache(directory: folder)
        if arguments[1] == "remove-all-then-save" { try cache.blocking.removeAll() }
        if arguments[1] != "delete" {
            try cache.messages.blocking.save([ChatMessage(messageID: id, channelURL: arguments[3], createdAt: id * 1_000, text: "message \(id)")])
        } else {
            try cache.messages.blocking.applyChangeLog(updated: [], deletedMessageIDs: [id], in: arguments[3])
        }
    case "hold":
        guard let seconds = Double(arguments[3]) else { fail("bad seconds", status: 2) }
        holdEveryLock(of: folder, for: seconds)
    case "upsert":
        guard let worker = Int(arguments[3]), let count = Int(arguments[4]) else { fail("bad numbers", status: 2) }
        let cache = try ChatCache(directory: folder, configuration: Configuration(maxMessagesPerChannel: 100_000))
        for index in 0..<count {
            let id = Int64(worker * 100_000 + index + 1)
            for url in ["shared", "own-\(worker)"] {
                try cache.messages.blocking.save([ChatMessage(messageID: id, channelURL: url, createdAt: id, text: "from \(worker)")])
            }
            if try cache.messages.blocking.load(in: "shared").isEmpty {
                fail("worker \(worker): 'shared' read as empty after save \(index)", status: 3)
            }
        }
    case "edit":
        // Saves `count` messages into "shared", then one change log per message through the `async` API:
        // every third deleted, the others edited, each flushed (appended lines, format 2). Worker 2 keeps
        // only summaries in memory, so its edits go to a file it does not hold, which worker 1 changes meanwhile.
        guard let worker = Int(arguments[3]), let count = Int(arguments[4]) else { fail("bad numbers", status: 2) }
        var configuration = Configuration(maxMessagesPerChannel: 100_000)
        if worker == 2 { configuration.memoryLimit = 2_000 }
        let cache = try ChatCache(directory: folder, configuration: configuration)
        Task.detached {
            do {
                for index in 1...count {
                    let id = Int64(worker * 100_000 + index)
                    try await cache.messages.save([ChatMessage(messageID: id, channelURL: "shared", createdAt: id, text: "from \(worker)")])
                }
                try await cache.flush()
                for index in 1...count {
                    let id = Int64(worker * 100_000 + index)
                    let edited = ChatMessage(messageID: id, channelURL: "shared", createdAt: id, text: "edited by \(worker)")
                    try await cache.messages.applyChangeLog(
                        updated: index % 3 == 0 ? [] : [edited], deletedMessageIDs: index % 3 == 0 ? [id] : [], in: "shared")
                    try await cache.flush()
                }
                exit(0)
            } catch {
                fail("edit: \(error)", status: 1)
            }
        }
        dispatchMain()
    case "churn":
        guard let seed = UInt64(arguments[3]) else { fail("bad seed", status: 2) }
        let durability: Durability = arguments[4] == "synchronized" ? .synchronized : .atomic
        let cache = try ChatCache(
            directory: folder, configuration: Configuration(maxMessagesPerChannel: 40, durability: durability))
        var random = XorShift(seed: seed)
        func next(_ bound: Int) -> Int { random.next(bound) }
        while true {
            let channel = next(CrashRecords.channelCount)
            let url = CrashRecords.url(channel)
            let version = next(1_000)
            let messages = (0..<(1 + next(60))).map { _ in
                CrashRecords.message(channel: channel, id: Int64(1 + next(80)), version: version)
            }
            switch next(6) {
            case 0, 1: try cache.messages.blocking.replace(messages, in: url)
            case 2: try cache.messages.blocking.save(messages.prefix(3))
            case 3:
                try cache.messages.blocking.applyChangeLog(
                    updated: messages.prefix(5), deletedMessageIDs: (0..<2).map { _ in Int64(1 + next(80)) }, in: url)
            case 4: try cache.messages.blocking.removeAll(in: url)
            default:
                try cache.users.blocking.save([ChatUser(userID: "user-\(next(20))", nickname: "v\(version)")])
            }
        }
    case "flush-churn":
        // `<limit>` or `<limit>:<memory limit in bytes>` (a small memory tier keeps only summaries of most channels).
        let limits = arguments[5].split(separator: ":").map { Int($0) }
        guard let seed = UInt64(arguments[3]), let limit = limits.first ?? nil, limit >= 1,
            limits.count == 1 || (limits.count == 2 && (limits[1] ?? -1) >= 0)
        else {
            fail("bad seed or limit", status: 2)
        }
        FlushChurn.start(
            folder: folder, seed: seed, durability: arguments[4] == "synchronized" ? .synchronized : .atomic, limit: limit,
            memoryLimit: limits.count == 2 ? limits[1] : nil)
    case "outbox-churn":
        guard let run = Int(arguments[4]), let count = Int(arguments[5]), run >= 0, count >= 0 else {
            fail("bad run or count", status: 2)
        }
        OutboxChurn.start(folder: folder, server: URL(fileURLWithPath: arguments[3]), run: run, count: count)
    case "cancel-storm":
        guard let rounds = Int(arguments[3]), let requests = Int(arguments[4]) else { fail("bad numbers", status: 2) }
        CancelStorm.run(mode: arguments[2], rounds: rounds, requests: requests)
    case "rekey":
        try KeyRotation.run(folder: folder, from: arguments[3], to: arguments[4])
    case "search-churn":
        guard let seed = UInt64(arguments[3]) else { fail("bad seed", status: 2) }
        try SearchChurn.run(folder: folder, seed: seed)
    default:
        fail("unknown command \(arguments[1])", status: 2)
    }
} catch {
    fail("\(arguments[1]): \(error)", status: 1)
}
