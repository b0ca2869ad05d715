import Foundation  // and with it the C library (see PlatformLibc.swift)

/// How ``Durability/synchronized`` reaches stable storage on each platform.
///
/// On Apple platforms `fsync` only hands the data to the drive, which may
/// keep it in its volatile cache (and reorder it) past a power loss; the
/// `F_FULLFSYNC` control asks the drive to flush that cache too. A file
/// system that does not support it (some network and FAT volumes) fails it;
/// then `fsync` is the best there is, as SQLite does it (`full_fsync` in
/// `os_unix.c`). On Linux and Android `fsync` and `fdatasync` already reach
/// the device (the kernel issues the cache flush).
extension FileSystem {
    /// Flushes a regular file's data, and the metadata needed to read it
    /// back (its size), to stable storage: `F_FULLFSYNC` (else `fsync`) on
    /// Apple platforms; `fdatasync` on Linux and Android, which skips the
    /// journal commit a time-only change would cost (a sidecar rewritten in
    /// place); `fsync` elsewhere. Returns what the last call returned (`0`
    /// for success; otherwise `errno` says why).
    static func synchronize(_ descriptor: Int32) -> Int32 {
        #if canImport(Darwin)
        fullSynchronize(descriptor)
        #elseif os(Linux) || os(Android)
        fdatasync(descriptor)
        #else
        fsync(descriptor)
        #endif
    }

    /// Flushes a folder's entries (the names a rename or create changed) to
    /// stable storage: `F_FULLFSYNC` (else `fsync`) on Apple platforms,
    /// `fsync` elsewhere. Returns what the last call returned.
    static func synchronizeFolder(_ descriptor: Int32) -> Int32 {
        #if canImport(Darwin)
        fullSynchronize(descriptor)
        #else
        fsync(descriptor)
        #endif
    }

    #if canImport(Darwin)
    /// `fcntl(F_FULLFSYNC)`, falling back to `fsync` when the file system refuses it.
    private static func fullSynchronize(_ descriptor: Int32) -> Int32 {
        if fcntl(descriptor, F_FULLFSYNC) == 0 { return 0 }
        return fsync(descriptor)
    }
    #endif
}
