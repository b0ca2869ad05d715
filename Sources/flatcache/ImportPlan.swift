import FlatCache
import Foundation

/// What an import will save, read and checked in full before anything is written.
///
/// Every line is decoded and held to the library's rules that would throw at
/// save time (an empty channel URL or user id, a record whose `serialize()`
/// throws), so a bad line stops the import before the cache is even opened.
/// Records the caching rules leave out are counted here, by reason.
///
/// ```swift
/// let plan = try ImportPlan(reading: input)   // throws "Line 7 ..." for a bad line
/// try cache.channels.save(plan.channels)
/// ```
struct ImportPlan {
    /// The group channels, in input order (duplicates included: the last one wins).
    var channels = [ChatChannel]()
    /// Sent messages of group channels, by channel (keyed by the URL's UTF-8 bytes, as the library's file names are).
    var messages = [[UInt8]: (channelURL: String, messages: [ChatMessage])]()
    /// The users, in input order.
    var users = [ChatUser]()
    /// Data files to create empty when missing, each once, in input order.
    var emptyFiles = [EmptyFile]()
    /// What the caching rules leave out, and lines a later line replaces.
    var leftOut = LeftOut()
    /// The files in ``emptyFiles``, compared by the bytes of their URLs (as the library names files), not as `String`s.
    private var emptyFileKeys = Set<[UInt8]>()

    /// Records the import does not save, by reason.
    struct LeftOut: Codable, Equatable {
        /// Messages with id 0 (not sent yet): never cached.
        var unsentMessages = 0
        /// Open channels: never cached.
        var openChannels = 0
        /// Messages of open channels: never cached.
        var openChannelMessages = 0
        /// Channels, messages and users that a later line with the same key replaces (the last one wins).
        var replacedByLaterLines = 0

        /// What the library calls "left out": unsent messages, open channels and their messages.
        var byCachingRules: Int { unsentMessages + openChannels + openChannelMessages }
    }

    /// The messages to save, channel by channel in a stable order (by the URL's bytes).
    var messagesByChannel: [(channelURL: String, messages: [ChatMessage])] {
        messages.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map(\.value)
    }

    /// How many distinct records of each kind will be saved.
    var distinctChannels: Int { Set(channels.map { Array($0.channelURL.utf8) }).count }
    var distinctMessages: Int { messages.values.reduce(0) { $0 + Set($1.messages.map(\.messageID)).count } }
    var distinctUsers: Int { Set(users.map { Array($0.userID.utf8) }).count }

    /// Reads JSON Lines: `\n` or `\r\n` line ends; blank and whitespace-only lines are skipped
    /// and still counted, so line numbers are those a text editor shows.
    ///
    /// - Throws: ``ToolError`` naming the first bad line.
    init(reading input: Data, progress: (_ done: Int, _ total: Int) -> Void = { _, _ in }) throws(ToolError) {
        let lines = Self.lines(of: input)
        let decoder = JSONDecoder()
        for (index, line) in lines.enumerated() {
            progress(index + 1, lines.count)
            guard !line.isBlank else { continue }
            let parsed: ExportLine
            do {
                parsed = try decoder.decode(ExportLine.self, from: line.bytes)
            } catch {
                throw ToolError("Line \(line.number) \(Self.problem(error, in: line.bytes, decoder: decoder)).")
            }
            try add(parsed, line: line.number)
        }
        let keys = channels.count + users.count + messages.values.reduce(0) { $0 + $1.messages.count }
        leftOut.replacedByLaterLines = keys - distinctChannels - distinctUsers - distinctMessages
    }

    /// Checks one record against the library's rules and adds it, or counts it as left out.
    private mutating func add(_ parsed: ExportLine, line: Int) throws(ToolError) {
        switch parsed {
        case .channel(let channel):
            guard channel.isGroupChannel else { return leftOut.openChannels += 1 }
            guard !channel.channelURL.isEmpty else { throw ToolError("Line \(line): a channel's channelURL must not be empty.") }
            try Self.check(channel, "channel", line: line)
            channels.append(channel)
        case .message(let message):
            guard message.messageID != 0 else { return leftOut.unsentMessages += 1 }
            guard message.isInGroupChannel else { return leftOut.openChannelMessages += 1 }
            guard !message.channelURL.isEmpty else { throw ToolError("Line \(line): a message's channelURL must not be empty.") }
            try Self.check(message, "message", line: line)
            messages[Array(message.channelURL.utf8), default: (message.channelURL, [])].messages.append(message)
        case .user(let user):
            guard !user.userID.isEmpty else { throw ToolError("Line \(line): a user's userID must not be empty.") }
            try Self.check(user, "user", line: line)
            users.append(user)
        case .empty(let file):
            if case .messages(let url) = file, url.isEmpty {
                throw ToolError("Line \(line): a message file's channelURL must not be empty.")
            }
            if emptyFileKeys.insert(file.key).inserted { emptyFiles.append(file) }
        }
    }

    /// Serializes `record` as a save will, through the protocol requirement, and reports a failure by line.
    private static func check(_ record: some CacheRecord, _ kind: String, line: Int) throws(ToolError) {
        do {
            _ = try record.serialize()
        } catch {
            throw ToolError("Line \(line): the \(kind) cannot be saved: \(error)")
        }
    }

    // MARK: - Lines

    /// One line of the input: its number (from 1) and its bytes without the line end.
    struct Line {
        let number: Int
        let bytes: Data

        /// Only spaces, tabs and carriage returns, or nothing.
        var isBlank: Bool { bytes.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D } }
    }

    /// The input's lines, split at `\n` with a `\r` before it dropped, and a UTF-8 byte order mark skipped.
    ///
    /// Scans with `memchr`: `Data`'s generic `firstIndex(of:)` costs seconds on a large export.
    static func lines(of input: Data) -> [Line] {
        let bytes = [UInt8](input)
        var lines = [Line]()
        var start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            while start < buffer.count {
                var end = buffer.count
                if let found = memchr(base + start, 0x0A, buffer.count - start) {
                    end = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
                }
                var stop = end
                if stop > start && buffer[stop - 1] == 0x0D { stop -= 1 }
                lines.append(Line(number: lines.count + 1, bytes: Data(buffer[start..<stop])))
                start = end + 1
            }
        }
        return lines
    }

    // MARK: - Messages

    /// What is wrong with a line that does not decode, as the end of a sentence "Line N ...".
    static func problem(_ error: any Error, in line: Data, decoder: JSONDecoder) -> String {
        struct Probe: Decodable { let kind: String }
        if case DecodingError.dataCorrupted(let context) = error, context.codingPath.isEmpty { return "is not valid JSON" }
        guard let probe = try? decoder.decode(Probe.self, from: line) else {
            if (try? JSONSerialization.jsonObject(with: line, options: [.fragmentsAllowed])) is [String: Any] {
                return "has no \"kind\" (channel, message, user or empty)"
            }
            return "is not a JSON object"
        }
        guard ExportLine.Kind(rawValue: probe.kind) != nil else {
            return "has kind \"\(probe.kind)\", not channel, message, user or empty"
        }
        return "is not a valid \(probe.kind == "empty" ? "empty-file line" : probe.kind): \(reason(error))"
    }

    /// A short reason for a decoding error, without Foundation's long context.
    static func reason(_ error: any Error) -> String {
        func path(_ context: DecodingError.Context) -> String { context.codingPath.map(\.stringValue).joined(separator: ".") }
        return switch error {
        case DecodingError.keyNotFound(let key, _): "\"\(key.stringValue)\" is missing"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
            "\"\(path(context))\" has the wrong type"
        case DecodingError.dataCorrupted(let context): "\"\(path(context))\" is not valid"
        default: "\(error)"
        }
    }
}
