import Foundation

/// The package's executables, built beside the test bundle.
enum Executables {
    static func url(_ name: String) -> URL {
        let products = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let beside = products.appendingPathComponent(name)
        if FileManager.default.fileExists(atPath: beside.path) { return beside }
        // macOS: the tests run inside an .xctest bundle, two levels further in.
        let bundle = Bundle.allBundles.first { $0.bundlePath.hasSuffix(".xctest") }
        return (bundle?.bundleURL.deletingLastPathComponent() ?? products).appendingPathComponent(name)
    }
}
