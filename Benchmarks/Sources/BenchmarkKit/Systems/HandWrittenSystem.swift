import CBenchCrypto
import FlatCache
import Foundation

/// The "basic" guide written the obvious way: per channel, serialize each
/// record, Base64 it, join the lines, SHA256, compare with the sidecar, and
/// `Data.write(options: .atomic)`; read back with `Data.split`.
package final class HandWrittenSystem: CacheSystem {
    private let folder: URL
    private let durable: Bool

    /// Keeps no limit: the "basic" guide has none (`messageLimit` is accepted and ignored).
    package init(folder: URL, durable: Bool, messageLimit: Int? = nil) throws {
        self.folder = folder
        self.durable = durable
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    package func saveEverything(_ workload: Workload) throws {
        try write(workload.channels, to: "channels")
        for (channel, messages) in zip(workload.channels, workload.messages) {
            try write(messages, to: Self.fileName(for: channel.channelURL))
        }
    }

    package func reopen() {}

    package func loadAgain(_ urls: [String], times: Int) throws -> Int {
        var total = 0
        for _ in 0..<times { total += try loadEveryChannel(urls) }
        return total
    }

    package func loadEveryChannel(_ urls: [String]) throws -> Int {
        try urls.reduce(0) { $0 + (try messages(in: $1).count) }
    }

    package func upsert(_ messages: [ChatMessage]) throws {
        for message in messages {
            var list = try self.messages(in: message.channelURL).filter { $0.messageID != message.messageID }
            list.append(message)
            list.sort { ($0.createdAt, $0.messageID) < ($1.createdAt, $1.messageID) }
            try write(list, to: Self.fileName(for: message.channelURL))
        }
    }

    package func apply(_ changeLogs: [ChangeLog]) throws {
        for log in changeLogs {
            let updated = Dictionary(log.updated.map { ($0.messageID, $0) }, uniquingKeysWith: { $1 })
            let deleted = Set(log.deleted)
            let list = try messages(in: log.channelURL)
                .filter { !deleted.contains($0.messageID) }
                .map { updated[$0.messageID] ?? $0 }
            try write(list, to: Self.fileName(for: log.channelURL))
        }
    }

    package func loadPages(_ queries: [PageQuery]) throws -> Int {
        try queries.reduce(0) { total, query in
            total + (try messages(in: query.channelURL).filter { $0.createdAt < query.before }.suffix(30).count)
        }
    }

    package func openAndLoadChannelList() throws -> Int {
        try read("channels", as: ChatChannel.self).count
    }

    // MARK: - The guide's two functions

    private func messages(in channelURL: String) throws -> [ChatMessage] {
        try read(Self.fileName(for: channelURL), as: ChatMessage.self)
    }

    private func write<R: CacheRecord>(_ records: [R], to name: String) throws {
        let lines = try records.map { try $0.serialize().base64EncodedString() }
        let body = Data(lines.joined(separator: "\n").utf8)
        let hash = Self.sha256(body)
        let file = folder.appendingPathComponent(name)
        let sidecar = folder.appendingPathComponent(name + ".sha256")
        if let old = try? String(contentsOf: sidecar, encoding: .utf8), old == hash { return }
        try body.write(to: file, options: .atomic)
        try Data(hash.utf8).write(to: sidecar, options: .atomic)
        if durable {
            for url in [file, sidecar, folder] {
                let handle = try FileHandle(forReadingFrom: url)
                try handle.synchronize()
                try handle.close()
            }
        }
    }

    private func read<R: CacheRecord>(_ name: String, as type: R.Type) throws -> [R] {
        let file = folder.appendingPathComponent(name)
        guard let body = try? Data(contentsOf: file),
            let hash = try? String(contentsOf: folder.appendingPathComponent(name + ".sha256"), encoding: .utf8),
            hash == Self.sha256(body)
        else { return [] }
        return try body.split(separator: UInt8(ascii: "\n")).compactMap { line in
            try Data(base64Encoded: Data(line)).map { try R(serializedData: $0) }
        }
    }

    private static func fileName(for channelURL: String) -> String {
        sha256(Data(channelURL.utf8)) + ".txt"
    }

    package static func sha256(_ data: Data) -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        data.withUnsafeBytes { input in
            _ = EVP_Digest(input.baseAddress, input.count, &digest, nil, EVP_sha256(), nil)
        }
        return digest.map { String(format: "%02x", $0) }.joined()
    }
}
