/// Why a data file could not be trusted. A load that finds one treats the
/// file as a cache miss and moves it (with its sidecar) into quarantine.
enum Corruption: Error, Equatable, CustomStringConvertible {
    /// The data file exists but its `.sha256` sidecar does not.
    case missingSidecar
    /// The sidecar is not one `sha256sum` line naming this data file.
    case malformedSidecar
    /// The data's SHA256 differs from the one the sidecar records.
    case digestMismatch(recorded: String, actual: String)
    /// The file does not end with a newline (a truncated last line).
    case missingFinalNewline
    /// A line is not standard Base64 (line numbers start at 1).
    case invalidBase64(line: Int)
    /// A line of an encrypted folder did not open with its key: moved from
    /// another file, changed, or sealed with another key (line numbers start at 1).
    case unsealable(line: Int)
    /// A line's bytes did not make a record: the record type's initializer threw.
    case undecodableRecord(line: Int, reason: String)
    /// A folder, link or device stands where the data file or its sidecar belongs.
    case notARegularFile
    /// A canonical line (plain Base64) after an appended one (format 2):
    /// appended lines come last (line numbers start at 1).
    case canonicalLineAfterAppended(line: Int)
    /// Appended lines (format 2) in a file whose records have no key to apply them by.
    case appendedLinesNotAllowed
    /// A file without a sidecar (`records`, `preloaded`) is not in its form; says how.
    case unexpectedContents(String)

    var description: String {
        switch self {
        case .missingSidecar: "its .sha256 sidecar is missing"
        case .malformedSidecar: "its .sha256 sidecar is not a sha256sum line for it"
        case .digestMismatch(let recorded, let actual):
            "its SHA256 is \(actual) but the sidecar says \(recorded)"
        case .missingFinalNewline: "its last line is cut short (no final newline)"
        case .invalidBase64(let line): "line \(line) is not valid Base64"
        case .unsealable(let line): "line \(line) does not open with the cache's key (moved from another file, changed, or another key)"
        case .undecodableRecord(let line, let reason): "line \(line) does not decode: \(reason)"
        case .notARegularFile: "it or its sidecar is not a regular file"
        case .canonicalLineAfterAppended(let line): "line \(line) is a plain record line after an appended (* or -) line"
        case .appendedLinesNotAllowed: "it has appended (* or -) lines, which this kind of file never holds"
        case .unexpectedContents(let problem): problem
        }
    }
}
