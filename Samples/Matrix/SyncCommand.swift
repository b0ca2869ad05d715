import ArgumentParser
import FlatCache
import FlatCacheMatrix
import Foundation

/// `flatcache-matrix sync`: caches the account's rooms, once or `--follow`.
struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Log in and cache the account's rooms, messages and profiles; --follow keeps them up to date.",
        discussion: """
            Each room's collection starts from the cache: it applies what changed since the last \
            sync (edits, redactions), fetches the messages missed since, and saves the newest page. \
            More than --huge-gap missed is a huge gap: the room's newest page then replaces \
            everything cached for the room (older messages are dropped, not kept beside it), and \
            the room's line says so. A sync token too old to patch with replaces it the same way. \
            Messages queued by 'send' are sent first, in order per room, each exactly once (the \
            outbox's request id is the transaction id); a plain sync waits --send-wait seconds at \
            most for them, --follow keeps sending until interrupted. \
            Exit bounds: every request to the homeserver ends within 30 seconds (plus the 30-second \
            wait of a live /sync); once the rooms are synced, a plain sync waits at most \
            --send-wait seconds for sends and then exits within 10 seconds; --follow exits within \
            10 seconds of Ctrl-C (SIGINT) or SIGTERM. Stopping that takes longer ends the process \
            with status 3; what was not sent stays queued for the next sync. \
            Give a password (--password, or FLATCACHE_MATRIX_PASSWORD) or an access token \
            (--access-token, or FLATCACHE_MATRIX_TOKEN). A password login creates a device named \
            flatcache-matrix.
            """)

    @OptionGroup var login: LoginOptions

    @OptionGroup var folder: FolderOption

    @Option(name: .long, help: "Messages per page, at least 1.")
    var pageSize = 50

    @Option(name: .long, help: "Older pages to cache per room after the newest, 0 or more.")
    var history = 0

    @Option(name: .customLong("huge-gap"), help: "The most missed messages fetched per room; more is a huge gap.")
    var hugeGap = 300

    @Flag(
        name: .long,
        help: "After syncing, keep the cache up to date with live events until interrupted (Ctrl-C or SIGTERM); exits within 10 seconds of it.")
    var follow = false

    @Flag(inversion: .prefixedNo, help: "Fetch every room's newest page in one /sync first, instead of asking each room.")
    var prefetch = true

    @Option(
        name: .customLong("send-wait"),
        help: "How long a plain sync waits for queued messages to be sent, in seconds; it exits at most 10 seconds later.")
    var sendWait = 30

    func validate() throws {
        guard pageSize >= 1 else { throw ValidationError("--page-size must be 1 or more, not \(pageSize).") }
        guard history >= 0 else { throw ValidationError("--history must be 0 or more, not \(history).") }
        guard hugeGap >= 0 else { throw ValidationError("--huge-gap must be 0 or more, not \(hugeGap).") }
        guard sendWait >= 0 else { throw ValidationError("--send-wait must be 0 or more, not \(sendWait).") }
    }

    func run() async throws {
        let account = try await login.account()
        let cache = try MatrixCache(directory: folder.url, configuration: Configuration(maxMessagesPerChannel: 10_000))
        let source = MatrixSource(client: account.client)
        let sync = try AccountSync(
            cache: cache, source: source, pageSize: pageSize, history: history, hugeGap: hugeGap, prefetch: prefetch)
        // What 'send' queued goes out while the rooms sync; the collections show it confirmed.
        let sending = OutboxSending(cache: cache, source: source)
        await sending.start()
        do {
            try await sync.syncOnce()
            await sending.waitUntilSent(within: .seconds(sendWait))
            if follow { try await sync.follow() }
        } catch {
            ExitDeadline.arm(ExitDeadline.stopping, while: "stopping after an error")
            await sending.stop()
            await sync.stop()
            try await cache.close()
            throw error
        }
        ExitDeadline.arm(ExitDeadline.stopping, while: "stopping")
        await sending.stop()
        await sync.stop()
        try await cache.close()
        print("cache closed: \(folder.directory)")
    }
}
