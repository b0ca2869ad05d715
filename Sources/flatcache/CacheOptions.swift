import ArgumentParser
import FlatCache
import Foundation

/// The options every subcommand shares: the cache folder and the output form.
struct CacheOptions: ParsableArguments {
    @Argument(help: "The cache folder.")
    var directory: String

    @Flag(help: "Print JSON for scripts instead of text for people.")
    var json = false

    var url: URL { URL(fileURLWithPath: directory) }

    /// Opens an existing cache, never creating one (a missing or foreign folder is an error).
    func openExisting() throws -> ChatCache<ChatMessage, ChatChannel, ChatUser> {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw ToolError("\(directory) is not a folder.")
        }
        guard FileManager.default.fileExists(atPath: url.appendingPathComponent("format").path) else {
            throw ToolError("\(directory) is not a FlatCache folder: it has no 'format' file.")
        }
        return try ChatCache(directory: url, configuration: Configuration(logger: Output.quietLogger))
    }
}

/// An error with one sentence for standard error.
struct ToolError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
