import Foundation

/// The TCP connections a process holds open to a port, read from Linux's
/// `/proc`: its descriptors' socket inodes (`/proc/<pid>/fd`) matched with
/// the kernel's connection tables (`/proc/<pid>/net/tcp` and `tcp6`).
enum OpenConnections {
    /// Whether this system has `/proc` to read them from (Linux).
    static let areReadable = FileManager.default.fileExists(atPath: "/proc/self/net/tcp")

    /// How many established connections process `pid` holds to `port` (on any address).
    static func count(of pid: Int32, toPort port: Int) -> Int {
        localPorts(of: pid, toPort: port).count
    }

    /// The local ports of the established connections process `pid` holds to `port`.
    static func localPorts(of pid: Int32, toPort port: Int) -> [Int] {
        let inodes = socketInodes(of: pid)
        guard !inodes.isEmpty else { return [] }
        var ports = [Int]()
        for table in ["tcp", "tcp6"] {
            // Read to the end: a /proc file's size says 0, which a whole-file read may trust.
            guard let file = FileHandle(forReadingAtPath: "/proc/\(pid)/net/\(table)") else { continue }
            let text = String(decoding: file.readDataToEndOfFile(), as: UTF8.self)
            try? file.close()
            for line in text.split(separator: "\n").dropFirst() {
                // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                guard fields.count > 9, fields[3] == "01",  // ESTABLISHED
                    let remotePort = fields[2].split(separator: ":").last.flatMap({ Int($0, radix: 16) }),
                    remotePort == port, inodes.contains(String(fields[9])),
                    let localPort = fields[1].split(separator: ":").last.flatMap({ Int($0, radix: 16) })
                else { continue }
                ports.append(localPort)
            }
        }
        return ports
    }

    /// The inodes of the sockets among the process's open descriptors.
    private static func socketInodes(of pid: Int32) -> Set<String> {
        let folder = "/proc/\(pid)/fd"
        guard let descriptors = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return [] }
        var inodes = Set<String>()
        for descriptor in descriptors {
            // A socket's link reads "socket:[12345]".
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(folder)/\(descriptor)"),
                target.hasPrefix("socket:[")
            else { continue }
            inodes.insert(String(target.dropFirst("socket:[".count).dropLast()))
        }
        return inodes
    }
}
