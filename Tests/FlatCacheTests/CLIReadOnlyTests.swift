import FlatCache
import Foundation
import Testing

/// The tool's read commands never change a folder: on a damaged cache they
/// report each damaged file on standard error and exit 1, leaving it byte for
/// byte as it was; they work on a folder they may only read; and they read a
/// folder of other record types as opaque records. Only `verify --repair`
/// and `import` change a folder.
@Suite struct CLIReadOnlyTests {
    let folder: TemporaryFolder
    let cache: URL
    static let channel = "sendbird_group_channel_tokyo"
    static let readCommands: [[String]] = [
        ["info", "cache"], ["info", "cache", "--json"], ["channels", "cache"], ["users", "cache", "--json"],
        ["messages", "cache", channel], ["export", "cache"], ["verify", "cache"],
    ]
    /// The read commands, and those that read no file `damage()` damages.
    static let healthyReadCommands = readCommands + [["outbox", "cache"], ["outbox", "cache", "--json"]]

    init() throws {
        folder = try TemporaryFolder()
        cache = folder.appending("cache")
        try FileManager.default.copyItem(at: GoldenFolder.url("sample-cache"), to: cache)
    }

    func snapshot() throws -> URL {
        let copy = folder.appending("before-\(UUID().uuidString)")
        try FileManager.default.copyItem(at: cache, to: copy)
        return copy
    }

    /// Flips a byte of the tokyo channel's message file and of `users.lines`.
    func damage() throws -> [String] {
        let paths = ["messages/" + (try CacheFolderSummary.messagesFilePath(forChannel: Self.channel).dropFirst("messages/".count)), "users.lines"]
        for path in paths {
            let url = cache.appendingPathComponent(path)
            var bytes = try Data(contentsOf: url)
            bytes[12] ^= 1
            try bytes.write(to: url)
        }
        return paths
    }

    @Test(arguments: readCommands)
    func aReadCommandOnADamagedCacheReportsItExits1AndChangesNothing(_ arguments: [String]) throws {
        let damaged = try damage()
        let before = try snapshot()

        let run = try ToolRun(arguments, in: folder.url)

        #expect(run.status == 1, "\(run.stderr)")
        // verify reports on standard output; the others on standard error, each the files it reads
        let reported = arguments[0] == "verify" ? run.stdout : run.stderr
        let read = switch arguments[0] {
        case "channels", "messages": [damaged[0]]
        case "users": [damaged[1]]
        default: damaged
        }
        for path in read { #expect(reported.contains(path), "\(arguments): \(reported)") }
        #expect(try GoldenFolder.differences(between: cache, and: before).isEmpty, "\(arguments) changed the folder")
    }

    @Test(arguments: healthyReadCommands)
    func aReadCommandOnAHealthyCacheExits0AndChangesNothing(_ arguments: [String]) throws {
        let before = try snapshot()
        let run = try ToolRun(arguments, in: folder.url)
        #expect(run.status == 0, "\(arguments): \(run.stderr)")
        #expect(run.stderr.isEmpty)
        #expect(try GoldenFolder.differences(between: cache, and: before).isEmpty)
    }

    /// Makes the temporary folder root-owned and readable, not writable, by others.
    func makeReadableOnly() throws {
        for path in [folder.url.path] + (try FileManager.default.subpathsOfDirectory(atPath: folder.url.path).map { folder.url.path + "/" + $0 }) {
            var isDirectory: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
            _ = chmod(path, isDirectory.boolValue ? 0o755 : 0o644)
        }
    }

    @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")))
    func everyReadCommandExits0OnAHealthyFolderItMayOnlyRead() throws {
        try makeReadableOnly()
        let before = try snapshot()
        for arguments in Self.healthyReadCommands {
            let run = try ToolRun(arguments, in: folder.url, asNobody: true)
            #expect(run.status == 0, "\(arguments): \(run.stderr)")
            #expect(run.stderr.isEmpty, "\(arguments): \(run.stderr)")
        }
        #expect(try GoldenFolder.differences(between: cache, and: before).isEmpty)
    }

    @Test(.enabled(if: getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")))
    func everyReadCommandWorksOnAFolderItMayOnlyRead() throws {
        // Given a root-owned copy that user nobody may read but not write, one file damaged
        let damaged = try damage()
        try makeReadableOnly()
        let before = try snapshot()

        for arguments in Self.readCommands {
            let run = try ToolRun(arguments, in: folder.url, asNobody: true)
            #expect(run.status == 1, "\(arguments): \(run.stderr)")
            #expect(!run.stderr.contains("Permission denied") && !run.stderr.contains("Error:"), "\(arguments): \(run.stderr)")
            if arguments[0] == "info" { #expect(run.stderr.contains(damaged[0])) }
        }
        // and repair, which must write, says so in one typed line
        let repair = try ToolRun(["verify", "cache", "--repair"], in: folder.url, asNobody: true)
        #expect(repair.status == 1)
        #expect(repair.stderr.contains("is read-only"), "\(repair.stderr)")
        #expect(try GoldenFolder.differences(between: cache, and: before).isEmpty)
    }

    /// A channel, four messages and two users of an app's own record types, saved in `directory`.
    static func saveCustomRecords(in directory: URL) throws -> ChatCache<SDKMessage, SDKChannel, SDKUser> {
        let sdk = try ChatCache<SDKMessage, SDKChannel, SDKUser>(directory: directory)
        try sdk.channels.blocking.save([SDKChannel(channelURL: "a", isGroupChannel: true, lastMessageAt: 5)])
        try sdk.messages.blocking.save((1...4).map { SDKMessage(messageID: $0, channelURL: "a", createdAt: $0, body: "m") })
        try sdk.users.blocking.save([SDKUser(userID: "u1"), SDKUser(userID: "u2")])
        return sdk
    }

    @Test func aFolderOfOtherRecordTypesReadsAsOpaqueRecords() async throws {
        // Given a folder written with an app's own record types
        let custom = folder.appending("custom")
        let sdk = try Self.saveCustomRecords(in: custom)
        try await sdk.outbox.send(SDKMessage(messageID: 0, channelURL: "a", createdAt: 9, body: "queued"), requestID: "q-1")
        let before = folder.appending("custom-before")
        try FileManager.default.copyItem(at: custom, to: before)

        // When the tool reads it
        let info = try ToolRun(["info", "custom", "--json"], in: folder.url)
        let channels = try ToolRun(["channels", "custom"], in: folder.url)
        let messages = try ToolRun(["messages", "custom", "a", "--json"], in: folder.url)
        let verify = try ToolRun(["verify", "custom"], in: folder.url)
        let outbox = try ToolRun(["outbox", "custom", "--json"], in: folder.url)
        let export = try ToolRun(["export", "custom"], in: folder.url)

        // Then it shows counts, bytes and times, never quarantines, and refuses only what needs decoding
        #expect(info.status == 0, "\(info.stderr)")
        #expect(info.stdout.contains("\"channels\" : 1") && info.stdout.contains("\"messages\" : 4") && info.stdout.contains("\"users\" : 2"))
        #expect(info.stdout.contains("SDKMessage") && info.stdout.contains("lastSavedAt"))
        #expect(channels.status == 0 && channels.stdout.contains("channels.lines") && channels.stderr.contains("SDKChannel"))
        #expect(messages.status == 0 && messages.stdout.contains("\"records\" : 4"))
        #expect(verify.status == 0 && verify.stdout.contains("5 files checked, 0 bad"), "\(verify.stdout)")
        #expect(outbox.status == 0 && outbox.stdout.contains("\"path\" : \"outbox.lines\"") && outbox.stdout.contains("\"records\" : 1"), "\(outbox.stdout)")
        #expect(export.status == 1 && export.stderr.contains("export reads the built-in record types only"))
        #expect(try GoldenFolder.differences(between: custom, and: before).isEmpty)
    }
}
