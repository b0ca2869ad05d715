// The platform's C library, named in this one place.
//
// Swift imports are per file, and an `@_exported` import would hand the C
// library to every app that imports FlatCache. So the other files reach the
// C library through `import Foundation`, which re-exports exactly this chain
// (swift-corelibs-foundation: Glibc, Musl, Bionic, WASILibc; Darwin's
// Foundation: Darwin). This file names it for the code that differs by C
// library: the fields of `struct stat` below, and the files of Platform/.
#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Android)
import Android
#elseif canImport(Bionic)
import Bionic
#elseif canImport(WASILibc)
import WASILibc
#else
#error("FlatCache needs a POSIX C library: Darwin, Glibc, Musl, Bionic (Android) or WASILibc")
#endif

/// The times of `struct stat`, under one name on every C library: Darwin
/// calls them `st_mtimespec` and `st_ctimespec`, POSIX 2008 (Glibc, Musl,
/// Bionic, WASILibc) `st_mtim` and `st_ctim`; both are a `timespec`.
extension stat {
    /// When the file's contents were last modified.
    var modificationTimespec: timespec {
        #if canImport(Darwin)
        st_mtimespec
        #else
        st_mtim
        #endif
    }

    /// When the file's contents or attributes (its inode) last changed.
    var statusChangeTimespec: timespec {
        #if canImport(Darwin)
        st_ctimespec
        #else
        st_ctim
        #endif
    }
}
