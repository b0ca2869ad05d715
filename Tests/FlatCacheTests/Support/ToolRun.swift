import Foundation

/// One run of the `flatcache` tool as a separate program: its exit status and output.
struct ToolRun {
    let status: Int32
    let stdout: String
    let stderr: String

    /// Runs `flatcache arguments...` in `directory`, as user `nobody` (through
    /// `setpriv`) when `asNobody`, feeding `input` on standard input.
    init(_ arguments: [String], in directory: URL, input: Data? = nil, asNobody: Bool = false) throws {
        let process = Process()
        if asNobody {
            let tool = try Executables.runnableCopy(of: "flatcache", in: directory)
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", tool.path] + arguments
        } else {
            process.executableURL = Executables.url("flatcache")
            process.arguments = arguments
        }
        process.currentDirectoryURL = directory
        let (out, err, inp) = (Pipe(), Pipe(), Pipe())
        process.standardOutput = out
        process.standardError = err
        process.standardInput = inp
        try process.run()
        inp.fileHandleForWriting.write(input ?? Data())
        try inp.fileHandleForWriting.close()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        status = process.terminationStatus
        self.stdout = String(decoding: stdout, as: UTF8.self)
        self.stderr = String(decoding: stderr, as: UTF8.self)
    }
}
