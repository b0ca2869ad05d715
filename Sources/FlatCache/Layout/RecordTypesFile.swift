import Foundation

/// The `records` file at a cache's root: which record types wrote the folder,
/// and whether it is encrypted, with which key.
///
/// Three lines, `messages <name>\n`, `channels <name>\n` and `users <name>\n`,
/// names being ``CacheRecord/recordTypeName``; in an encrypted folder a
/// fourth, `encryption aes-256-gcm <key id>\n` (``Encryption/keyID``). An
/// addition to format 1 that earlier readers never look at: a folder without
/// it was written before it existed, and the first writable open records its
/// types. (A reader that knows only three lines refuses an encrypted folder
/// rather than read its sealed lines as damaged.)
enum RecordTypesFile {
    /// What the file says.
    struct Contents: Equatable {
        /// The record types.
        var types: RecordTypes
        /// The id of the key that seals the folder's lines; `nil` in a plain folder.
        var keyID: String?
    }

    /// The file's bytes for `types`, and `keyID` when the folder is encrypted.
    static func contents(_ types: RecordTypes, keyID: String? = nil) -> Data {
        let encryption = keyID.map { "\(encryptionPrefix)\($0)\n" } ?? ""
        return Data("messages \(types.messages)\nchannels \(types.channels)\nusers \(types.users)\n\(encryption)".utf8)
    }

    /// The types recorded in `data`; `nil` unless it is in the file's form.
    static func parse(_ data: Data) -> RecordTypes? {
        parseContents(data)?.types
    }

    /// The types and key id recorded in `data`; `nil` unless it is in the file's form.
    static func parseContents(_ data: Data) -> Contents? {
        let newline = UInt8(ascii: "\n")
        guard data.last == newline else { return nil }
        // Split bytes, not Characters: "\r\n" is one Character, and a name may end with "\r".
        let lines = data.dropLast().split(separator: newline, omittingEmptySubsequences: false)
        let roles = ["messages ", "channels ", "users "].map { Array($0.utf8) }
        guard lines.count == roles.count || lines.count == roles.count + 1 else { return nil }
        var names = [String]()
        for (line, role) in zip(lines, roles) {
            guard line.starts(with: role), line.count > role.count,
                let name = String(validating: line.dropFirst(role.count), as: UTF8.self)
            else { return nil }
            names.append(name)
        }
        var keyID: String?
        if lines.count > roles.count {
            let line = lines[lines.startIndex + roles.count]
            let prefix = Array(encryptionPrefix.utf8)
            let id = line.dropFirst(prefix.count)
            guard line.starts(with: prefix), id.count == 16,
                id.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) })
            else { return nil }
            keyID = String(decoding: id, as: UTF8.self)
        }
        return Contents(types: RecordTypes(messages: names[0], channels: names[1], users: names[2]), keyID: keyID)
    }

    /// The fourth line's start, before the key id.
    static let encryptionPrefix = "encryption aes-256-gcm "

    /// The types recorded in the folder of `layout`: `nil` when it has no
    /// `records` file, and placeholder names when the file cannot be read as
    /// three lines (so that opening refuses it rather than guess).
    static func read(_ layout: CacheLayout) throws(FlatCacheError) -> RecordTypes? {
        try read(at: layout.recordTypesPath)
    }

    /// The types recorded in the `records` file at `path` (see ``read(_:)``).
    static func read(at path: String) throws(FlatCacheError) -> RecordTypes? {
        try readContents(at: path)?.types
    }

    /// The types and key id recorded in the folder of `layout` (see ``read(_:)``).
    static func readContents(_ layout: CacheLayout) throws(FlatCacheError) -> Contents? {
        try readContents(at: layout.recordTypesPath)
    }

    /// What the `records` file at `path` says: `nil` when there is none, and
    /// placeholder names when it cannot be read (so that opening refuses it rather than guess).
    static func readContents(at path: String) throws(FlatCacheError) -> Contents? {
        let data: Data?
        do {
            data = try FileSystem.contentsOfFile(at: path)
        } catch where FileSystem.isNotARegularFile(error) {
            return Contents(types: unreadable)
        }
        guard let data else { return nil }
        return parseContents(data) ?? Contents(types: unreadable)
    }

    /// Records `types` in the folder of `layout`, atomically, with the key id
    /// of the layout's sealer when it is encrypted.
    static func write(_ types: RecordTypes, _ layout: CacheLayout, synchronized: Bool) throws(FlatCacheError) {
        for name in [types.messages, types.channels, types.users] {
            // A programmer's error, like a bad format string: trap rather than write an unreadable file.
            precondition(
                !name.isEmpty && !name.utf8.contains(UInt8(ascii: "\n")), "a recordTypeName must be one non-empty line: \(name)")
        }
        try FileSystem.replaceFile(
            at: layout.recordTypesPath, with: contents(types, keyID: layout.sealer?.keyID), synchronized: synchronized)
    }

    /// What a damaged `records` file reads as.
    private static let unreadable = RecordTypes(
        messages: "(unreadable)", channels: "(unreadable)", users: "(unreadable)")
}
