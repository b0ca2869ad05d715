// swift-tools-version:6.0
import PackageDescription

// A package of its own: its target is a libFuzzer entry point with no `main`,
// built only with `-sanitize=fuzzer` (see `Fuzz/run`).
let package = Package(
    name: "FlatCacheFuzz",
    dependencies: [
        .package(name: "FlatCache", path: ".."),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    ],
    targets: [
        // SHA256 to make valid sidecars for inputs, so the fuzzer reaches the decoders.
        .systemLibrary(name: "CFuzzCrypto", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .executableTarget(
            name: "flatcache-fuzz-load",
            dependencies: [
                .product(name: "FlatCache", package: "FlatCache"),
                .product(name: "Logging", package: "swift-log"),
                "CFuzzCrypto",
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
