// swift-tools-version:6.0
import PackageDescription

// The file system's fault injection (Sources/FlatCache/Storage/FaultInjection.swift) is compiled into
// debug builds only, where the tests arm it: a release build makes its system calls unchecked.
let faultInjection = SwiftSetting.define("FLATCACHE_FAULTS", .when(configuration: .debug))

let package = Package(
    name: "FlatCache",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9), .visionOS(.v1)],
    products: [
        .library(name: "FlatCache", targets: ["FlatCache"]),
        .executable(name: "flatcache", targets: ["flatcache"]),
        .library(name: "FlatCacheMatrix", targets: ["FlatCacheMatrix"]),
        // A scriptable in-memory chat server for an app's tests and previews.
        .library(name: "FlatCacheTesting", targets: ["FlatCacheTesting"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        // `swift package generate-documentation --target FlatCache` (or FlatCacheMatrix, FlatCacheTesting).
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // SHA256 on Linux comes from OpenSSL's libcrypto; Apple platforms use CryptoKit.
        .systemLibrary(
            name: "COpenSSL",
            path: "Sources/COpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        .target(
            name: "FlatCache",
            dependencies: [
                .target(name: "COpenSSL", condition: .when(platforms: [.linux, .android])),
                .product(name: "Logging", package: "swift-log"),
            ],
            // The privacy manifest Apple requires of SDKs: file timestamps, reason C617.1.
            resources: [.copy("PrivacyInfo.xcprivacy")],
            swiftSettings: [faultInjection]
        ),
        // SimulatedChatServer: the sources an app implements, in memory and scriptable like a bad
        // network, for tests and demos. Not a dependency of FlatCache itself.
        .target(
            name: "FlatCacheTesting",
            dependencies: ["FlatCache"]
        ),
        // A Matrix account's rooms, messages and profiles as FlatCache sources (client-server API v3,
        // URLSession; FoundationNetworking on Linux). Not a dependency of FlatCache itself.
        .target(
            name: "FlatCacheMatrix",
            dependencies: ["FlatCache"]
        ),
        // The command-line tool: inspect, verify, repair, export and import a cache folder.
        .executableTarget(
            name: "flatcache",
            dependencies: [
                "FlatCache",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The simulated chat server behind the demo and the golden tests: sample data only.
        .target(
            name: "FlatCacheSampleServer",
            dependencies: ["FlatCache"],
            path: "Samples/Server",
            resources: [.copy("Data")]
        ),
        .executableTarget(
            name: "flatcache-demo",
            dependencies: [
                "FlatCache",
                "FlatCacheSampleServer",
                "FlatCacheTesting",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Samples/Demo"
        ),
        // Keeps a Matrix account's rooms cached in a folder and shows them offline.
        .executableTarget(
            name: "flatcache-matrix",
            dependencies: [
                "FlatCache",
                "FlatCacheMatrix",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Samples/Matrix"
        ),
        // A second process for the tests (two processes on one cache folder, liveness campaigns); not a product.
        .executableTarget(
            name: "flatcache-test-helper",
            dependencies: ["FlatCache", "FlatCacheMatrix", "FlatCacheTesting"],
            path: "Tests/Helpers/TestHelper"
        ),
        .testTarget(
            name: "FlatCacheTests",
            dependencies: [
                "FlatCache", "FlatCacheMatrix", "FlatCacheTesting", "FlatCacheSampleServer",
                "flatcache-test-helper", "flatcache", "flatcache-demo",
            ],
            exclude: ["Golden", "GoldenV1", "FuzzFindings"],
            swiftSettings: [faultInjection]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// Stricter spelling for every target, in one place.
for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + [
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("InternalImportsByDefault"),
    ]
}
