import Foundation

/// One run of one of the package's programs (the `flatcache` tool by
/// default) as a separate process: its exit status and output.
struct ToolRun {
    let status: Int32
    let stdout: String
    let stderr: String

    /// Runs `program arguments...` in `directory`, as user `nobody` (through
    /// `setpriv`) when `asNobody`, feeding `input` on standard input; a run
    /// still going after `timeLimit` is terminated (status 15).
    init(
        _ arguments: [String], of program: String = "flatcache", in directory: URL, input: Data? = nil,
        asNobody: Bool = false, timeLimit: Duration = .seconds(120)
    ) throws {
        let process = Process()
        if asNobody {
            let tool = try Executables.runnableCopy(of: program, in: directory)
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", tool.path] + arguments
        } else {
            process.executableURL = Executables.url(program)
            process.arguments = arguments
        }
        process.currentDirectoryURL = directory
        let (out, err, inp) = (Pipe(), Pipe(), Pipe())
        process.standardOutput = out
        process.standardError = err
        process.standardInput = inp
        try process.run()
        let deadline = DispatchTime.now() + .milliseconds(Int(timeLimit.components.seconds * 1_000))
        DispatchQueue.global().asyncAfter(deadline: deadline) { if process.isRunning { process.terminate() } }
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
