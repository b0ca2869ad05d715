import ArgumentParser
import FlatCache
import Foundation

/// The cache the tool reads: the built-in record types.
typealias Cache = ChatCache<ChatMessage, ChatChannel, ChatUser>

/// The options every subcommand shares: the cache folder, its key when it
/// is encrypted, and the output form.
struct CacheOptions: ParsableArguments {
    @Argument(help: "The cache folder.")
    var directory: String

    @OptionGroup var key: KeyFileOption

    @Flag(help: "Print JSON for scripts instead of text for people.")
    var json = false

    var url: URL { URL(fileURLWithPath: directory) }

    /// Runs a read command on the existing cache, changing nothing in it.
    ///
    /// The cache is opened read-only: a damaged file reads as a miss and stays
    /// where it is. After `body`, each damaged file met is reported on standard
    /// error, and the command exits 1 if there was one. A folder written with
    /// other record types cannot be decoded: `otherTypes` gets its summary
    /// (record types, line counts, bytes, times) instead, and its damaged
    /// files are reported the same way. So does `withoutKey`, when given, for
    /// an encrypted folder and no `--key-file`; without it, that is an error
    /// naming the key id.
    func read(
        _ body: (Cache) throws -> Void,
        otherTypes: (CacheFolderSummary) throws -> Void,
        withoutKey: ((CacheFolderSummary) throws -> Void)? = nil
    ) throws {
        let damaged = DamagedFiles()
        do {
            guard let cache = try openForReading(damaged, otherTypes: otherTypes, withoutKey: withoutKey) else { return }
            try body(cache)
        } catch {
            damaged.report()
            throw error
        }
        if damaged.report() { throw ExitCode(1) }
    }

    /// Runs a read command that needs `await` (the outbox's calls are async)
    /// as ``read(_:otherTypes:)`` runs one that does not.
    func read(
        _ body: (Cache) async throws -> Void,
        otherTypes: (CacheFolderSummary) throws -> Void,
        withoutKey: ((CacheFolderSummary) throws -> Void)? = nil
    ) async throws {
        let damaged = DamagedFiles()
        do {
            guard let cache = try openForReading(damaged, otherTypes: otherTypes, withoutKey: withoutKey) else { return }
            try await body(cache)
        } catch {
            damaged.report()
            throw error
        }
        if damaged.report() { throw ExitCode(1) }
    }

    /// The cache opened read-only, reporting damaged files into `damaged`; or
    /// `nil` once `otherTypes` has shown a folder of other record types, or
    /// `withoutKey` an encrypted folder whose key was not given.
    private func openForReading(
        _ damaged: DamagedFiles, otherTypes: (CacheFolderSummary) throws -> Void,
        withoutKey: ((CacheFolderSummary) throws -> Void)?
    ) throws -> Cache? {
        let keyless: Bool
        do {
            return try open(readOnly: true, onDamagedFile: damaged.add)
        } catch FlatCacheError.recordTypeMismatch {
            keyless = false
        } catch FlatCacheError.encryptionKeyRequired where withoutKey != nil {
            keyless = true
        }
        let summary = try CacheFolderSummary.read(directory: url)
        for file in summary.files where file.problem != nil {
            damaged.add(DamagedFile(path: file.path, problem: file.problem ?? "", movedTo: nil))
        }
        if keyless, let withoutKey { try withoutKey(summary) } else { try otherTypes(summary) }
        return nil
    }

    /// Opens the existing cache: read-only for reading, or to change it (`verify --repair`).
    ///
    /// - Throws: A ``ToolError`` for a missing or foreign folder (the tool never
    ///   creates a cache there) or a bad key file, or what the library throws
    ///   (``FlatCacheError/encryptionKeyRequired(directory:keyID:)`` for an
    ///   encrypted folder and no `--key-file`).
    func open(readOnly: Bool, onDamagedFile: (@Sendable (DamagedFile) -> Void)? = nil) throws -> Cache {
        try checkIsACache()
        // Every message a file holds (a folder may have been written with a higher limit),
        // and no memory tier: the tool reads each file once.
        return try Cache(directory: url, configuration: Configuration(
            maxMessagesPerChannel: .max, memoryLimit: 0,
            logger: Output.quietLogger, readOnly: readOnly, onDamagedFile: onDamagedFile,
            encryption: try key.encryption()))
    }

    /// A missing or foreign folder is an error: the tool never creates a cache here.
    private func checkIsACache() throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) else {
            throw ToolError("\(directory) does not exist.")
        }
        guard isDirectory.boolValue else { throw ToolError("\(directory) is not a folder.") }
        guard FileManager.default.fileExists(atPath: url.appendingPathComponent("format").path) else {
            throw ToolError("\(directory) is not a FlatCache folder: it has no 'format' file.")
        }
    }
}

/// The damaged files a read command met, reported when it ends.
final class DamagedFiles: @unchecked Sendable {
    // Lock rule (docs/reliability.md, "Liveness"): held only to read or change the fields it guards;
    // nothing is resumed, yielded or called out while it is held.
    private let lock = NSLock()
    private var files = [DamagedFile]()

    func add(_ file: DamagedFile) {
        lock.withLock { if !files.contains(file) { files.append(file) } }
    }

    /// One line per damaged file on standard error.
    ///
    /// - Returns: Whether there was one.
    @discardableResult
    func report() -> Bool {
        let found = lock.withLock { files }
        for file in found {
            Output.error("Damaged: \(file.path): \(file.problem) (left in place; `flatcache verify --repair` moves it aside)")
        }
        return !found.isEmpty
    }
}

/// An error with one sentence for standard error.
struct ToolError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
