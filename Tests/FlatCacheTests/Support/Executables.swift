import Foundation

/// The package's executables, built beside the test bundle.
enum Executables {
    /// Runs `flatcache-test-helper` with `arguments` as another process and waits for it;
    /// returns its exit status.
    static func runHelper(_ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = url("flatcache-test-helper")
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    static func url(_ name: String) -> URL {
        let products = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let beside = products.appendingPathComponent(name)
        if FileManager.default.fileExists(atPath: beside.path) { return beside }
        // macOS: the tests run inside an .xctest bundle, two levels further in.
        let bundle = Bundle.allBundles.first { $0.bundlePath.hasSuffix(".xctest") }
        return (bundle?.bundleURL.deletingLastPathComponent() ?? products).appendingPathComponent(name)
    }

    /// A copy of the executable `name` in `folder`, that every user may run:
    /// for tests run as another user, who may not reach the build folder
    /// (a clone in a private temporary folder). Swift executables find the
    /// toolchain's libraries by absolute path, so the copy runs as it is.
    static func runnableCopy(of name: String, in folder: URL) throws -> URL {
        let bin = folder.appendingPathComponent(".bin")
        try FileManager.default.createDirectory(at: bin, withIntermediateDirectories: true)
        let copy = bin.appendingPathComponent(name)
        if !FileManager.default.fileExists(atPath: copy.path) {
            try FileManager.default.copyItem(at: url(name), to: copy)
        }
        for (path, mode) in [(folder.path, 0o755), (bin.path, 0o755), (copy.path, 0o755)] as [(String, mode_t)] {
            _ = chmod(path, mode)
        }
        return copy
    }
}
