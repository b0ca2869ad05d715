import FlatCache
import Foundation

/// The `rekey` command: moves a cache folder from one key to another (or
/// between plain and a key) while a test kills it with SIGKILL at a random
/// moment (see `KeyRotationCrashTests`).
///
/// `flatcache-test-helper rekey <folder> <from> <to>`, each key 64 hex
/// digits or `plain`: opens the folder with `from`, prints `changing`, calls
/// `blocking.rotateKey(to:)` (or `blocking.migrate(encryption:)` when either
/// side is plain), then prints `changed <microseconds>`, the change's time,
/// and exits 0.
enum KeyRotation {
    static func run(folder: URL, from: String, to: String) throws -> Never {
        guard let old = encryption(from), let new = encryption(to) else { fail("rekey: bad key", status: 2) }
        let cache = try ChatCache(directory: folder, configuration: Configuration(encryption: old))
        say("changing")
        let start = DispatchTime.now().uptimeNanoseconds
        if case .aes256gcm(let key)? = new, old != nil {
            _ = try cache.blocking.rotateKey(to: key)
        } else {
            _ = try cache.blocking.migrate(encryption: new)
        }
        say("changed \((DispatchTime.now().uptimeNanoseconds - start) / 1_000)")
        exit(0)
    }

    /// `plain` as `.some(nil)`, 64 hex digits as that key; `nil` for anything else.
    static func encryption(_ argument: String) -> Encryption?? {
        if argument == "plain" { return .some(nil) }
        let digits = Array(argument.utf8)
        guard digits.count == 64 else { return nil }
        var key = Data()
        for index in stride(from: 0, to: 64, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else { return nil }
            key.append(byte)
        }
        return .some(.aes256gcm(key: key))
    }

    /// Writes `line` at once, unbuffered: the test waits for it, and a kill leaves a line whole or absent.
    static func say(_ line: String) {
        FileHandle.standardOutput.write(Data("\(line)\n".utf8))
    }
}
