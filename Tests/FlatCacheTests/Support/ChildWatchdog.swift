import Foundation

/// Runs a child process that says it is alive by printing lines, so that a
/// hang in it fails a test instead of hanging the suite: when no line comes
/// for `heartbeat`, the whole run passes its `budget`, or the child prints a
/// line starting with `stuck ` (it found a hang itself), the watchdog takes
/// every thread's stack with `gdb -p <pid> -batch -ex "thread apply all bt"`
/// (Swift names demangled when `swift-demangle` is on the `PATH`), kills the
/// child with SIGKILL, and says why in ``Outcome/hang``.
enum ChildWatchdog {
    /// How a watched child ended.
    struct Outcome {
        /// Its exit status; 9 (the signal) when the watchdog killed it.
        var status: Int32
        /// Every line it printed on standard output.
        var lines: [String]
        /// The end of its standard error (at most 4,000 characters).
        var stderr: String
        /// Why the watchdog stopped it; `nil` when it ended by itself.
        var hang: String?
        /// Its threads' stacks when it hung (at most ``stackLines`` lines).
        var stacks: String?

        /// The distinct FlatCache frames in ``stacks``, without addresses: what a failure message names.
        var flatCacheFrames: [String] {
            guard let stacks else { return [] }
            var seen = Set<String>()
            var frames = [String]()
            for line in stacks.split(separator: "\n") where line.contains("FlatCache") || line.contains("Broadcast") {
                guard let range = line.range(of: " in ") else { continue }
                let frame = String(line[range.upperBound...].prefix(160))
                if seen.insert(frame).inserted { frames.append(frame) }
            }
            return frames
        }
    }

    /// The most lines of stacks kept (and printed).
    static let stackLines = 400

    /// Runs `executable arguments...` and watches it (see the type's description).
    static func run(_ executable: URL, _ arguments: [String], heartbeat: Duration, budget: Duration) async throws -> Outcome {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let (out, err) = (Pipe(), Pipe())
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        let output = Output()
        try process.run()
        read(out.fileHandleForReading) { output.add($0) }
        let errors = Output()
        read(err.fileHandleForReading) { errors.add($0) }

        let clock = ContinuousClock()
        let started = clock.now
        var hang: String?
        while process.isRunning {
            try? await Task.sleep(for: .milliseconds(50))
            let (lastLine, stuck) = output.state
            if let stuck {
                hang = "the child found a call past its bound: \(stuck)"
            } else if clock.now - (lastLine ?? started) > heartbeat {
                hang = "no heartbeat for \(heartbeat) (last line: \(output.lines.last ?? "none"))"
            } else if clock.now - started > budget {
                hang = "the run passed its budget of \(budget) (last line: \(output.lines.last ?? "none"))"
            }
            if hang != nil { break }
        }
        var stacks: String?
        if hang != nil, process.isRunning {
            stacks = threadStacks(of: process.processIdentifier)
            kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
        output.waitForEnd()
        errors.waitForEnd()
        return Outcome(
            status: process.terminationStatus, lines: output.lines, stderr: String(errors.text.suffix(4_000)), hang: hang,
            stacks: stacks)
    }

    /// Every thread's stack of process `pid`, by gdb (given 90 s), demangled, at most ``stackLines`` lines.
    static func threadStacks(of pid: Int32) -> String {
        let gdb = (try? capture("/usr/bin/gdb", ["-p", "\(pid)", "-batch", "-ex", "thread apply all bt"], limit: 90)) ?? ""
        guard !gdb.isEmpty else { return "(gdb gave nothing)" }
        let demangled = (try? capture("/usr/bin/env", ["swift-demangle", "--simplified"], input: gdb, limit: 30)) ?? ""
        let stacks = demangled.isEmpty ? gdb : demangled
        // gdb's own chatter (libraries loaded) comes first; the stacks start at the first "Thread".
        let lines = stacks.split(separator: "\n", omittingEmptySubsequences: false)
        let first = lines.firstIndex { $0.hasPrefix("Thread ") } ?? 0
        return lines[first...].prefix(stackLines).joined(separator: "\n")
    }

    /// Runs a program and returns its standard output; terminated after `limit` seconds.
    private static func capture(_ path: String, _ arguments: [String], input: String? = nil, limit: Double) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        let (out, inp) = (Pipe(), Pipe())
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        process.standardInput = inp
        try process.run()
        DispatchQueue.global().asyncAfter(deadline: .now() + limit) { if process.isRunning { process.terminate() } }
        let writer = Thread {
            inp.fileHandleForWriting.write(Data((input ?? "").utf8))
            try? inp.fileHandleForWriting.close()
        }
        writer.start()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    /// Reads `handle` to its end on a thread of its own, handing each chunk to `take`.
    private static func read(_ handle: FileHandle, _ take: @escaping @Sendable (Data) -> Void) {
        Thread {
            while true {
                let chunk = handle.availableData
                take(chunk)
                if chunk.isEmpty { return }
            }
        }.start()
    }

    /// What a child printed on one stream, as lines, and when the last one came.
    private final class Output: @unchecked Sendable {
        private let lock = NSLock()
        // Guarded by `lock`.
        private var buffer = Data()
        private var whole = [String]()
        private var last: ContinuousClock.Instant?
        private var stuck: String?
        private var ended = false
        private var raw = Data()

        func add(_ chunk: Data) {
            let now = ContinuousClock.now
            lock.withLock {
                guard !chunk.isEmpty else {
                    ended = true
                    return
                }
                if raw.count < 64_000 { raw.append(chunk) }
                buffer.append(chunk)
                while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                    buffer.removeSubrange(buffer.startIndex...newline)
                    whole.append(line)
                    last = now
                    if stuck == nil, line.hasPrefix("stuck ") { stuck = line }
                }
            }
        }

        var state: (last: ContinuousClock.Instant?, stuck: String?) { lock.withLock { (last, stuck) } }
        var lines: [String] { lock.withLock { whole } }
        var text: String { lock.withLock { String(decoding: raw, as: UTF8.self) } }

        /// Waits (at most 5 s) until the stream reached its end.
        func waitForEnd() {
            for _ in 0..<500 where !lock.withLock({ ended }) { Thread.sleep(forTimeInterval: 0.01) }
        }
    }
}
