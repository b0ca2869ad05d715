import CFuzzCrypto
import FlatCache
import Foundation
import Logging

// libFuzzer over FlatCache's load path. Each input becomes a data file and a
// sidecar in a real cache folder, then is loaded through the public API.
//
// The first byte chooses: bits 0-1 the file (a channel's messages, the
// channel list, the users), bit 2 the sidecar (computed from the data, to
// get past the hash into the Base64 and record decoders; or taken raw from
// the input's second half), bit 3 whether a channel's messages are first
// read as a chat view's first page (`loadLatest`, disk tier: the partial
// read, and the whole file when its last line is an appended `*` or `-`
// one), bit 4 the folder (plain, or encrypted with the golden key), bits
// 5-7 that page's limit (0-7). A load must never crash or hang, and must
// return only records that are, byte for byte, lines of the data file (or
// an upsert line's Base64 after its `*`; sealed lines are not compared);
// a first page must be the newest records of the load that follows it,
// when that load returns any.

/// The caches the inputs are loaded through, each in a folder of its own:
/// plain (`false`) and encrypted with ``goldenKey`` (`true`).
nonisolated(unsafe) private var fixtures: [Bool: (cache: ChatCache<ChatMessage, ChatChannel, ChatUser>, root: URL)] = [:]

/// The key of the encrypted goldens (`EncryptedGoldenTests.key`), so that
/// `Golden/appended-edits-sealed` opens.
private var goldenKey: Data { Data(0...31) }

/// The channel of the goldens' message files; in an encrypted folder the
/// file's name (its HMAC under the key) is in every line's associated data,
/// so a sealed golden opens only under its own channel.
private let goldenChannelURL = "sendbird_group_channel_test"

/// The cache for plain (or, `sealed`, encrypted) inputs, opened on first use.
private func cache(sealed: Bool) -> (cache: ChatCache<ChatMessage, ChatChannel, ChatUser>, root: URL) {
    if let fixture = fixtures[sealed] { return fixture }
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("flatcache-fuzz-\(getpid())\(sealed ? "-sealed" : "")")
    try? FileManager.default.removeItem(at: root)
    // The caches live as long as the process. LeakSanitizer reports the key's `Data` storage as
    // leaked although the cache's `configuration` holds it (a pointer in an enum payload it does
    // not recognize, it seems), so nothing allocated while opening one is counted as a leak.
    leakChecksOff()
    defer { leakChecksOn() }
    // A silent logger: every corrupt input would log a warning.
    var configuration = Configuration(logger: Logger(label: "fuzz") { _ in SwiftLogNoOpLogHandler() })
    if sealed { configuration.encryption = .aes256gcm(key: goldenKey) }
    guard let made = try? ChatCache(directory: root, configuration: configuration) else {
        fatalError("cannot open a cache in \(root.path)")
    }
    fixtures[sealed] = (made, root)
    return (made, root)
}

/// LeakSanitizer's `__lsan_disable`: what is allocated until ``leakChecksOn()`` is never a leak.
@_silgen_name("__lsan_disable")
private func leakChecksOff()

/// LeakSanitizer's `__lsan_enable`, after ``leakChecksOff()``.
@_silgen_name("__lsan_enable")
private func leakChecksOn()

// SwiftPM links an executable with `main` pointing at `<module>_main`; with
// `-parse-as-library` nothing defines that, so define it and hand over to
// libFuzzer's own driver.
@_silgen_name("LLVMFuzzerRunDriver")
private func runFuzzer(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ test: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt
) -> CInt

@_cdecl("flatcache_fuzz_load_main")
func fuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var count = argc
    var arguments = argv
    return runFuzzer(&count, &arguments, fuzzLoad)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLoad(_ start: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    guard count > 0 else { return 0 }
    let input = Data(bytes: start, count: count)
    let mode = input[0]
    var body = input.dropFirst()
    let sealed = mode & 16 != 0
    let (cache, root) = cache(sealed: sealed)
    let channelURL = sealed ? goldenChannelURL : "fuzz"
    let dataPath: URL
    switch mode & 3 {
    case 0: dataPath = root.appendingPathComponent("channels.lines")
    case 1: dataPath = root.appendingPathComponent("users.lines")
    default:
        // The message file's name is the SHA256 of the URL, as `printf fuzz | sha256sum` prints it
        // (encrypted: its HMAC-SHA256 under the key).
        let key = sealed ? hmacSHA256Hex(Data(channelURL.utf8), key: goldenKey) : sha256Hex(Data(channelURL.utf8))
        dataPath = root.appendingPathComponent("messages").appendingPathComponent(key + ".lines")
        try? FileManager.default.createDirectory(
            at: dataPath.deletingLastPathComponent(), withIntermediateDirectories: true)
    }
    let sidecar: Data
    if mode & 4 == 0 {
        sidecar = Data("\(sha256Hex(body))  \(dataPath.lastPathComponent)\n".utf8)
    } else {
        let half = body.count / 2
        sidecar = Data(body.suffix(body.count - half))
        body = body.prefix(half)
    }
    try? Data(body).write(to: dataPath)
    try? sidecar.write(to: dataPath.appendingPathExtension("sha256"))

    let split = Data(body).split(separator: 0x0A, omittingEmptySubsequences: false).map { Data($0) }
    // An upsert line (`*` and a record's Base64) holds a record too.
    let lines = Set(split + split.filter { $0.first == UInt8(ascii: "*") }.map { Data($0.dropFirst()) })
    func check(_ records: [Data]) -> [Data] {
        for record in records where !sealed && !lines.contains(record.base64EncodedData()) {
            fatalError("a load returned a record that is not a line of the file")
        }
        return records
    }
    // Whatever a load returns must serialize again: the reader accepts nothing the writer refuses.
    func reencoded(_ records: [some CacheRecord]) -> [Data] {
        records.map { record in
            guard let bytes = try? record.serialize() else { fatalError("a loaded record does not serialize again") }
            return bytes
        }
    }
    switch mode & 3 {
    case 0: _ = check(reencoded((try? cache.channels.blocking.load()) ?? []))
    case 1: _ = check(reencoded((try? cache.users.blocking.load()) ?? []))
    default:
        // A chat view's first page, read from the file as on a first open (the disk tier keeps
        // nothing in memory, so the load below reads the file again).
        let limit = Int(mode >> 5)
        let page = mode & 8 == 0 ? nil : check(reencoded((try? cache.messages.using(.disk).blocking.loadLatest(in: channelURL, limit: limit)) ?? []))
        let all = check(reencoded((try? cache.messages.blocking.load(in: channelURL)) ?? []))
        if let page, !all.isEmpty, page != Array(all.suffix(limit)) {
            fatalError("a first page is not the newest records of the load")
        }
    }
    // Corrupt inputs are moved aside; do not let the quarantine grow without end.
    try? FileManager.default.removeItem(at: root.appendingPathComponent("quarantine"))
    return 0
}

/// HMAC-SHA256 under `key` in lowercase hex, as an encrypted folder names a message file.
private func hmacSHA256Hex(_ data: Data, key: Data) -> String {
    var code = [UInt8](repeating: 0, count: 32)
    key.withUnsafeBytes { key in
        data.withUnsafeBytes { input in
            _ = HMAC(EVP_sha256(), key.baseAddress, Int32(key.count), input.bindMemory(to: UInt8.self).baseAddress, input.count, &code, nil)
        }
    }
    return code.map { String(format: "%02x", $0) }.joined()
}

/// SHA256 as `sha256sum` prints it.
private func sha256Hex(_ data: Data) -> String {
    var digest = [UInt8](repeating: 0, count: 32)
    data.withUnsafeBytes { input in
        withUnsafePointer(to: UInt8(0)) { empty in
            _ = EVP_Digest(input.baseAddress ?? UnsafeRawPointer(empty), input.count, &digest, nil, EVP_sha256(), nil)
        }
    }
    return digest.map { String(format: "%02x", $0) }.joined()
}
