import Foundation

extension ProcessMemory {
    /// Resets the peak to the current resident size (Linux: `echo 5 > /proc/self/clear_refs`).
    package static func resetPeak() {
        try? Data("5".utf8).write(to: URL(fileURLWithPath: "/proc/self/clear_refs"))
    }
}

extension Workload {
    /// The workload called `name` ("S" or "L"); with `urlsOnly`, a cheap stand-in with the same channel URLs.
    package static func named(_ name: String, urlsOnly: Bool = false) -> Workload {
        let (channels, messages) = name == "L" ? (1_000, 200) : (100, 100)
        return Workload(name: name, channelCount: channels, messagesPerChannel: urlsOnly ? 1 : messages)
    }
}

