// swift-tools-version:6.1
import PackageDescription

// A package of its own, so that the library and its tests never build GRDB.
let package = Package(
    name: "FlatCacheBenchmarks",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "FlatCache", path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        // Counts allocations when preloaded into a child run (never into the timed runs).
        .package(url: "https://github.com/ordo-one/malloc-interposer.git", from: "1.6.1"),
    ],
    targets: [
        // SHA256 and Base64 from OpenSSL for the hand-written baseline and the limits.
        .systemLibrary(
            name: "CBenchCrypto",
            path: "Sources/CBenchCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        // The cache systems and data sets, shared by the two programs below.
        .target(
            name: "BenchmarkKit",
            dependencies: [
                .product(name: "FlatCache", package: "FlatCache"),
                .product(name: "GRDB", package: "GRDB.swift"),
                "CBenchCrypto",
            ]
        ),
        // The benchmark: times everything in this process, with the system allocator.
        .executableTarget(
            name: "flatcache-bench",
            dependencies: [
                "BenchmarkKit",
                .product(name: "FlatCache", package: "FlatCache"),
                .product(name: "FlatCacheMatrix", package: "FlatCache"),
                .product(name: "FlatCacheTesting", package: "FlatCache"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                "CBenchCrypto",
            ]
        ),
        // One operation in a fresh process, for its peak memory and, with the
        // interposer preloaded, its allocation count.
        .executableTarget(
            name: "flatcache-bench-probe",
            dependencies: [
                "BenchmarkKit",
                .product(name: "MallocInterposerSwift", package: "malloc-interposer"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
