@testable import FlatCache
import Foundation
import Testing

/// What a folder must look like after a key change was killed, and after the next open finished it.
extension KeyRotationCrashTests {
    /// Names at the root that are not data files.
    static let notData: Set<String> = ["format", "records", "rekey", "preloaded"]

    /// The data files of the folder at `root` (root and `messages/`), by path:
    /// everything but sidecars, hidden temporary files, markers and folders.
    static func dataFiles(in root: String) throws -> [String] {
        var paths = [String]()
        for folder in [root, root + "/messages"] where FileManager.default.fileExists(atPath: folder) {
            for name in try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
            where !name.hasPrefix(".") && !name.hasSuffix(".sha256") && !(folder == root && notData.contains(name)) {
                var isFolder: ObjCBool = false
                _ = FileManager.default.fileExists(atPath: folder + "/" + name, isDirectory: &isFolder)
                if !isFolder.boolValue { paths.append(folder + "/" + name) }
            }
        }
        return paths
    }

    /// Each data file of the folder that opens under neither `old` nor `new`
    /// (`nil` for plain), with what each found. A file counts as plain only
    /// when its records also decode as what the file holds (a sealed line is
    /// Base64 too). Reads without finishing anything.
    static func filesOpeningUnderNeither(_ root: String, _ old: Sealer?, _ new: Sealer?) throws -> [String] {
        var problems = [String]()
        let sides = [old, new].filter { $0 != nil } + [old, new].filter { $0 == nil }
        for path in try dataFiles(in: root) {
            var found = [String]()
            var opened = false
            for side in sides {
                let contents = try RecordFile(path: path, sealer: side).load(finishing: false).contents
                if case .records(let lines) = contents, side != nil || decodesAsItsKind(lines.records, path: path) {
                    opened = true
                    break
                }
                found.append("\(side?.keyID ?? "plain"): \(contents)".prefix(120).description)
            }
            if !opened { problems.append("\(path): \(found)") }
        }
        return problems
    }

    /// Whether every record of the plain file at `path` decodes as the kind the file holds.
    static func decodesAsItsKind(_ lines: [Data], path: String) -> Bool {
        let name = FileSystem.name(of: path)
        do {
            for line in lines {
                switch name {
                case "channels.lines": _ = try ChatChannel(serializedData: line)
                case "users.lines": _ = try ChatUser(serializedData: line)
                case "outbox.lines": _ = try OutboxRecord<ChatMessage>(serializedData: line)
                case _ where path.contains("/messages/") && name.hasSuffix(".lines"): _ = try ChatMessage(serializedData: line)
                default: return true  // continuity and usage: their lines are checked when the cache reads them
                }
            }
            return true
        } catch {
            return false
        }
    }

    /// Opens the folder with `key` (`nil` for plain), which finishes a change
    /// under way, and checks everything: contents as filled, no `rekey`, the
    /// `records` file naming the key, message files named under it, `verify`
    /// clean, nothing reported damaged (unless `damageAllowed`); then that `other` is refused.
    /// - Returns: What went wrong, empty when nothing did.
    static func checkFinished(
        _ url: URL, with key: Data?, other: Data?, expected: RotationFolder.Contents, damageAllowed: Bool = false
    ) async throws -> [String] {
        var problems = [String]()
        let damage = DamageRecorder()
        let encryption = key.map { Encryption.aes256gcm(key: $0) }
        let cache: RotationFolder.Cache
        do {
            cache = try RotationFolder.Cache(directory: url, configuration: RotationFolder.configuration(encryption, damage: damage))
        } catch {
            return ["open with \(encryption?.keyID ?? "plain") failed: \(error)"]
        }
        let found = try await RotationFolder.contents(of: cache, channels: Array(expected.messages.keys))
        if found != expected { problems.append("contents differ:\n  found    \(found)\n  expected \(expected)") }
        if FileManager.default.fileExists(atPath: url.appendingPathComponent("rekey").path) { problems.append("rekey left") }
        let records = try String(contentsOf: url.appendingPathComponent("records"), encoding: .utf8)
        let named = records.split(separator: "\n").first { $0.hasPrefix("encryption ") }.map(String.init)
        if named != encryption.map({ "encryption aes-256-gcm \($0.keyID)" }) {
            problems.append("records names \(named ?? "no key"), not \(encryption?.keyID ?? "plain")")
        }
        let layout = CacheLayout(root: url.path, sealer: try encryption.map { try Sealer($0) })
        let names = Set(expected.messages.keys.map { layout.fileKey(forChannel: $0) + ".lines" })
        let onDisk = Set(try FileManager.default.contentsOfDirectory(atPath: layout.messagesDirectory).filter { $0.hasSuffix(".lines") })
        if onDisk != names { problems.append("message files \(onDisk.subtracting(names)) left, \(names.subtracting(onDisk)) missing") }
        let invalid = try cache.blocking.verify().filter { !$0.isValid }
        if !invalid.isEmpty { problems.append("verify: \(invalid)") }
        if !damageAllowed && !damage.files.isEmpty { problems.append("damaged: \(damage.files)") }
        try await cache.close()
        if let refusal = refusalProblem(url, key: key, other: other) { problems.append(refusal) }
        return problems
    }

    /// `nil` when opening with `other` fails with the typed error a folder under `key` gives it.
    static func refusalProblem(_ url: URL, key: Data?, other: Data?) -> String? {
        let given = other.map { Encryption.aes256gcm(key: $0) }
        let keyID = key.map { Encryption.aes256gcm(key: $0).keyID }
        do {
            _ = try RotationFolder.Cache(directory: url, configuration: RotationFolder.configuration(given))
            return "opened with \(given?.keyID ?? "plain") too"
        } catch {
            switch (error, keyID, given?.keyID) {
            case (.wrongEncryptionKey(_, let recorded, let wrong), let keyID?, let givenID?) where recorded == keyID && wrong == givenID:
                return nil
            case (.encryptionKeyRequired(_, let recorded), let keyID?, nil) where recorded == keyID:
                return nil
            case (.folderNotEncrypted, nil, .some):
                return nil
            default:
                return "opening with \(given?.keyID ?? "plain") threw \(error)"
            }
        }
    }
}
