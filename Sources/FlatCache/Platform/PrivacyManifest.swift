import Foundation

/// FlatCache's privacy manifest, `PrivacyInfo.xcprivacy`, a resource of the
/// library: Xcode merges it into the app's privacy report.
///
/// It declares the one required-reason API FlatCache calls: file timestamps
/// (`NSPrivacyAccessedAPICategoryFileTimestamp`; `stat`, `fstat` and `lstat`
/// read a file's modification and change times to tell whether anyone wrote
/// it since it was read) with reason `C617.1`, files inside the app's
/// container or app group container. It tracks nothing and collects no data.
enum PrivacyManifest {
    /// Where the manifest is in the library's resource bundle.
    static var url: URL? {
        Bundle.module.url(forResource: "PrivacyInfo", withExtension: "xcprivacy")
    }
}
