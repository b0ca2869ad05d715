import Foundation

extension FileSystem {
    /// The error for Foundation failing to set an attribute of `path`
    /// (file protection, backup exclusion): its POSIX code when it carries
    /// one (itself or as the underlying error), else `EIO`.
    static func attributeFailure(_ path: String, _ error: any Error) -> FlatCacheError {
        .fileSystem(.setAttributes, path: path, code: posixCode(of: error as NSError) ?? .EIO)
    }

    private static func posixCode(of error: NSError) -> POSIXErrorCode? {
        if error.domain == NSPOSIXErrorDomain { return POSIXErrorCode(rawValue: Int32(error.code)) }
        guard let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError else { return nil }
        return posixCode(of: underlying)
    }
}
