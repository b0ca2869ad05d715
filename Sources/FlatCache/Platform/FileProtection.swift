import Foundation

/// The Data Protection class of a cache's files: when iOS, iPadOS, tvOS,
/// watchOS and visionOS can read them, relative to the device being locked
/// (see ``Configuration/fileProtection``). Mirrors Foundation's
/// `FileProtectionType`, which is not `Sendable` everywhere FlatCache builds.
public enum FileProtection: Sendable, Hashable, CaseIterable {
    /// No protection: readable whenever the device is on (`FileProtectionType.none`;
    /// not named `none`, which in the optional ``Configuration/fileProtection``
    /// would read as `nil`).
    case unprotected
    /// Readable only while the device is unlocked (`.complete`): every load
    /// and save of the cache fails while it is locked, and a background
    /// flush with the device locked cannot write.
    case complete
    /// New files can be made while the device is locked, and files open then
    /// stay readable; a closed file cannot be opened again until it is
    /// unlocked (`.completeUnlessOpen`).
    case completeUnlessOpen
    /// Readable once the user unlocked the device after it started, until it
    /// shuts down (`.completeUntilFirstUserAuthentication`): what a cache that
    /// background work (a push, a background refresh) reads and writes needs.
    /// The default.
    case completeUntilFirstUserAuthentication
}

#if (os(iOS) && !targetEnvironment(macCatalyst)) || os(tvOS) || os(watchOS) || os(visionOS)
extension FileProtection {
    /// Foundation's value of this class.
    var type: FileProtectionType {
        switch self {
        case .unprotected: .none
        case .complete: .complete
        case .completeUnlessOpen: .completeUnlessOpen
        case .completeUntilFirstUserAuthentication: .completeUntilFirstUserAuthentication
        }
    }
}
#endif

extension FileProtection {
    /// Whether this build applies file protection: on iOS, tvOS, watchOS and
    /// visionOS; not on macOS (Mac Catalyst included), Linux or Android.
    static var isApplied: Bool {
        #if (os(iOS) && !targetEnvironment(macCatalyst)) || os(tvOS) || os(watchOS) || os(visionOS)
        true
        #else
        false
        #endif
    }

    /// Gives the cache folder at `root` this class, where ``isApplied``.
    ///
    /// A file or folder made in a folder takes that folder's class, and a
    /// rename within one volume keeps the file (its inode) and so its class:
    /// every file the cache makes (each write's hidden temporary file, renamed
    /// over its target; `messages/`, `quarantine/`) gets this class from the
    /// root. When the root had another class (the first open, or a changed
    /// configuration), the files and folders already in it get this one too,
    /// once; an open that finds the class in place changes nothing.
    static func apply(_ protection: FileProtection, toFolder root: String) throws(FlatCacheError) {
        #if (os(iOS) && !targetEnvironment(macCatalyst)) || os(tvOS) || os(watchOS) || os(visionOS)
        let manager = FileManager.default
        let wanted = protection.type
        let current = (try? manager.attributesOfItem(atPath: root))?[.protectionKey] as? FileProtectionType
        guard current?.rawValue != wanted.rawValue else { return }
        var paths = [root]
        if let names = manager.subpaths(atPath: root) {
            paths += names.map { root + "/" + $0 }
        }
        // The files first and the root last, so that a failure part way leaves the root
        // unchanged and the next open tries again.
        for path in paths.reversed() {
            do {
                try manager.setAttributes([.protectionKey: wanted], ofItemAtPath: path)
            } catch {
                throw FileSystem.attributeFailure(path, error)
            }
        }
        #endif
    }
}
