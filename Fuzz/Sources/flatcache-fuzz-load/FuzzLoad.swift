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
// the input's second half). A load must never crash or hang, and must
// return only records that are, byte for byte, lines of the data file.

/// The cache the inputs are loaded through, in a folder of its own.
nonisolated(unsafe) private var fixture: (cache: ChatCache<ChatMessage, ChatChannel, ChatUser>, root: URL)?

private func cache() -> (cache: ChatCache<ChatMessage, ChatChannel, ChatUser>, root: URL) {
    if let fixture { return fixture }
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("flatcache-fuzz-\(getpid())")
    try? FileManager.default.removeItem(at: root)
    // A silent logger: every corrupt input would log a warning.
    let configuration = Configuration(logger: Logger(label: "fuzz") { _ in SwiftLogNoOpLogHandler() })
    guard let made = try? ChatCache(directory: root, configuration: configuration) else {
        fatalError("cannot open a cache in \(root.path)")
    }
    fixture = (made, root)
    return (made, root)
}

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
    let (cache, root) = cache()
    let channelURL = "fuzz"
    let dataPath: URL
    switch mode & 3 {
    case 0: dataPath = root.appendingPathComponent("channels.lines")
    case 1: dataPath = root.appendingPathComponent("users.lines")
    default:
        // The message file's name is the SHA256 of the URL, as `printf fuzz | sha256sum` prints it.
        dataPath = root.appendingPathComponent("messages").appendingPathComponent(sha256Hex(Data(channelURL.utf8)) + ".lines")
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

    let lines = Set(Data(body).split(separator: 0x0A, omittingEmptySubsequences: false).map { Data($0) })
    func check(_ records: [Data]) {
        for record in records where !lines.contains(record.base64EncodedData()) {
            fatalError("a load returned a record that is not a line of the file")
        }
    }
    // Whatever a load returns must serialize again: the reader accepts nothing the writer refuses.
    func reencoded(_ records: [some CacheRecord]) -> [Data] {
        records.map { record in
            guard let bytes = try? record.serialize() else { fatalError("a loaded record does not serialize again") }
            return bytes
        }
    }
    switch mode & 3 {
    case 0: check(reencoded((try? cache.channels.load()) ?? []))
    case 1: check(reencoded((try? cache.users.load()) ?? []))
    default: check(reencoded((try? cache.messages.load(in: channelURL)) ?? []))
    }
    // Corrupt inputs are moved aside; do not let the quarantine grow without end.
    try? FileManager.default.removeItem(at: root.appendingPathComponent("quarantine"))
    return 0
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
