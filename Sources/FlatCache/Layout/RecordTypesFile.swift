import Foundation

/// The `records` file at a cache's root: which record types wrote the folder.
///
/// Exactly three lines, `messages <name>\n`, `channels <name>\n` and
/// `users <name>\n`, names being ``CacheRecord/recordTypeName``. An addition
/// to format 1 that earlier readers never look at: a folder without it was
/// written before it existed, and the first writable open records its types.
enum RecordTypesFile {
    /// The file's bytes for `types`.
    static func contents(_ types: RecordTypes) -> Data {
        Data("messages \(types.messages)\nchannels \(types.channels)\nusers \(types.users)\n".utf8)
    }

    /// The types recorded in `data`; `nil` unless it is exactly the three lines.
    static func parse(_ data: Data) -> RecordTypes? {
        let newline = UInt8(ascii: "\n")
        guard data.last == newline else { return nil }
        // Split bytes, not Characters: "\r\n" is one Character, and a name may end with "\r".
        let lines = data.dropLast().split(separator: newline, omittingEmptySubsequences: false)
        let roles = ["messages ", "channels ", "users "].map { Array($0.utf8) }
        guard lines.count == roles.count else { return nil }
        var names = [String]()
        for (line, role) in zip(lines, roles) {
            guard line.starts(with: role), line.count > role.count,
                let name = String(validating: line.dropFirst(role.count), as: UTF8.self)
            else { return nil }
            names.append(name)
        }
        return RecordTypes(messages: names[0], channels: names[1], users: names[2])
    }

    /// The types recorded in the folder of `layout`: `nil` when it has no
    /// `records` file, and placeholder names when the file cannot be read as
    /// three lines (so that opening refuses it rather than guess).
    static func read(_ layout: CacheLayout) throws(FlatCacheError) -> RecordTypes? {
        try read(at: layout.recordTypesPath)
    }

    /// The types recorded in the `records` file at `path` (see ``read(_:)``).
    static func read(at path: String) throws(FlatCacheError) -> RecordTypes? {
        let data: Data?
        do {
            data = try FileSystem.contentsOfFile(at: path)
        } catch where FileSystem.isNotARegularFile(error) {
            return unreadable
        }
        guard let data else { return nil }
        return parse(data) ?? unreadable
    }

    /// Records `types` in the folder of `layout`, atomically.
    static func write(_ types: RecordTypes, _ layout: CacheLayout, synchronized: Bool) throws(FlatCacheError) {
        for name in [types.messages, types.channels, types.users] {
            // A programmer's error, like a bad format string: trap rather than write an unreadable file.
            precondition(
                !name.isEmpty && !name.utf8.contains(UInt8(ascii: "\n")), "a recordTypeName must be one non-empty line: \(name)")
        }
        try FileSystem.replaceFile(at: layout.recordTypesPath, with: contents(types), synchronized: synchronized)
    }

    /// What a damaged `records` file reads as.
    private static let unreadable = RecordTypes(
        messages: "(unreadable)", channels: "(unreadable)", users: "(unreadable)")
}
