import Foundation

/// A fresh, empty folder under the system's temporary folder, removed when
/// the value goes away. Swift Testing makes a new suite instance per test,
/// so a suite that stores one gets a new folder for every test.
final class TemporaryFolder: Sendable {
    /// The folder.
    let url: URL

    init() throws {
        var template = Array((FileManager.default.temporaryDirectory.path + "/flatcache-tests.XXXXXX").utf8CString)
        guard let path = mkdtemp(&template) else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        url = URL(fileURLWithPath: String(cString: path), isDirectory: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    /// A path inside the folder.
    func appending(_ relativePath: String) -> URL {
        url.appendingPathComponent(relativePath)
    }
}
