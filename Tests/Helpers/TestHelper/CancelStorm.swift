#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import FlatCacheMatrix
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The `cancel-storm` command: reproduces swift-corelibs-foundation #5412
/// (a Swift task cancelled while its URLSession answer arrives deadlocks on
/// Linux) and shows whether ``MatrixClient`` escapes it.
///
/// `flatcache-test-helper cancel-storm <client|raw|refused|refused-raw> <rounds> <requests>`:
/// each round sends `requests` long polls at once to a local server that
/// holds them all, then answers them one by one, cancelling each request's
/// task just before, just after or while its answer is written. `client`
/// sends through `MatrixClient.get`, `raw` through `URLSession.data(for:)`.
///
/// `refused` sends each request through `MatrixClient.get` to a port where
/// nothing listens, and cancels its task within 300 µs of its start: an app
/// offline whose view goes away. `refused-raw` does the same with a plain
/// `URLSession` data task in an ephemeral configuration, which holds a
/// `URLCache`: FoundationNetworking then reports the task's end twice and
/// traps ("Trying to access a behaviour for a task that in not in the
/// registry"). Swift 6.3.1, 20 rounds of 200, 5 runs each: `refused-raw`
/// trapped in 4 runs (after 5 to 21 rounds); `refused` in all 5 while
/// ``MatrixClient``'s session had a `URLCache`, in none since.
///
/// It prints `round <n>: <answered> answered, <cancelled> cancelled` after
/// each round and `ok`, and exits 0. A deadlock never prints `ok`: the test
/// that runs it kills it at its time limit.
enum CancelStorm {
    static func run(mode: String, rounds: Int, requests: Int) -> Never {
        guard ["client", "raw", "refused", "refused-raw"].contains(mode), rounds >= 1, requests >= 1 else {
            fail("cancel-storm: bad arguments", status: 2)
        }
        if mode.hasPrefix("refused") { cancelRefused(raw: mode == "refused-raw", rounds: rounds, requests: requests) }
        let server: HeldAnswers
        do {
            server = try HeldAnswers()
            server.start()
        } catch {
            fail("cancel-storm: \(error)", status: 1)
        }
        let configuration = MatrixClient.defaultConfiguration
        configuration.httpMaximumConnectionsPerHost = requests + 8
        configuration.timeoutIntervalForRequest = 60
        let session = URLSession(configuration: configuration)
        let client: MatrixClient
        do {
            client = try MatrixClient(homeserver: server.url, accessToken: "storm", configuration: configuration)
        } catch {
            fail("cancel-storm: \(error)", status: 1)
        }
        runRounds(rounds, requests: requests) { _ in
            var random = SystemRandomNumberGenerator()
            let tasks = (0..<requests).map { index in
                Task { () -> Bool in
                    if mode == "raw" {
                        let url = server.url.appendingPathComponent("_matrix/client/v3/sync").absoluteString + "?i=\(index)"
                        return (try? await session.data(for: URLRequest(url: URL(string: url)!))) != nil
                    }
                    do {
                        let _: Empty = try await client.get(["sync"], query: [("i", String(index))])
                        return true
                    } catch {
                        return false
                    }
                }
            }
            guard server.waitForRequests(requests, within: 30) else {
                fail("cancel-storm: only \(server.held) of \(requests) requests came within 30 s", status: 1)
            }
            // Answer and cancel each request in a random order of the two, a few microseconds apart.
            server.answerAll { index in
                let gap = UInt32.random(in: 0...200, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: return (before: { tasks[index].cancel() }, after: {})
                case 1: return (before: { usleep(gap) }, after: { tasks[index].cancel() })
                default: return (before: {}, after: { usleep(gap); tasks[index].cancel() })
                }
            }
            return tasks
        }
    }

    /// The `refused` modes: every request, to a port where nothing listens, cancelled within 300 µs of its start.
    private static func cancelRefused(raw: Bool, rounds: Int, requests: Int) -> Never {
        let url: URL
        let client: MatrixClient
        do {
            url = try closedPort()
            // An ephemeral configuration holds a URLCache: the client must leave it out.
            client = try MatrixClient(homeserver: url, accessToken: "storm", configuration: .ephemeral)
        } catch {
            fail("cancel-storm: \(error)", status: 1)
        }
        let session = URLSession(configuration: .ephemeral)
        let request = URLRequest(url: url.appendingPathComponent("_matrix/client/v3/sync"))
        runRounds(rounds, requests: requests) { _ in
            (0..<requests).map { index in
                let task = Task { () -> Bool in
                    if raw {
                        return await withCheckedContinuation { continuation in
                            let exchange = session.dataTask(with: request) { _, _, error in continuation.resume(returning: error == nil) }
                            exchange.resume()
                            usleep(UInt32.random(in: 0...300))
                            exchange.cancel()
                        }
                    }
                    let _: Empty? = try? await client.get(["sync"], query: [("i", String(index))])
                    return false
                }
                if !raw {
                    usleep(UInt32.random(in: 0...300))
                    task.cancel()
                }
                return task
            }
        }
    }

    /// Runs `rounds` rounds, each of the `requests` tasks `round` starts (and
    /// cancels), says how many answered after each, then `ok`, and exits 0.
    private static func runRounds(
        _ rounds: Int, requests: Int, _ round: @escaping @Sendable (Int) async -> [Task<Bool, Never>]
    ) -> Never {
        Task.detached {
            for number in 1...rounds {
                var answered = 0
                for task in await round(number) where await task.value { answered += 1 }
                say("round \(number): \(answered) answered, \(requests - answered) cancelled")
            }
            say("ok")
            exit(0)
        }
        dispatchMain()
    }

    /// A URL of 127.0.0.1 at a port where nothing listens: one bound, never listened on, and held open.
    private static func closedPort() throws -> URL {
        let holder = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard holder >= 0 else { throw HelperError("socket failed") }
        return try boundURL(holder)
    }

    /// Binds `socket` to 127.0.0.1 at a port the system picks, and returns its `http://` URL.
    fileprivate static func boundURL(_ socket: Int32) throws -> URL {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0
            }
        }
        guard bound else { throw HelperError("could not bind a port on 127.0.0.1") }
        return URL(string: "http://127.0.0.1:\(UInt16(bigEndian: address.sin_port))")!
    }

    private struct Empty: Decodable {}

    private static func say(_ line: String) {
        FileHandle.standardOutput.write(Data("\(line)\n".utf8))
    }
}

/// An HTTP server on 127.0.0.1 that reads requests (`GET …?i=<index>`) and
/// holds them, unanswered, until ``answerAll(_:)``.
private final class HeldAnswers: @unchecked Sendable {
    let url: URL
    private let listener: Int32
    private let lock = NSLock()
    // Guarded by `lock`: connections by request index.
    private var connections = [Int: Int32]()

    init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        guard listener >= 0 else { throw HelperError("socket failed") }
        url = try CancelStorm.boundURL(listener)
        guard listen(listener, 1_024) == 0 else { throw HelperError("listen failed") }
    }

    /// Starts accepting connections on a thread of its own.
    func start() {
        Thread { [self] in acceptForever() }.start()
    }

    var held: Int { lock.withLock { connections.count } }

    /// Whether `count` requests are held within `seconds`.
    func waitForRequests(_ count: Int, within seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while held < count {
            if Date() > deadline { return false }
            usleep(1_000)
        }
        return true
    }

    /// Answers every held request `{}` and closes it, calling what `around` gives for its index before and after.
    func answerAll(_ around: (Int) -> (before: () -> Void, after: () -> Void)) {
        let held = lock.withLock {
            defer { connections = [:] }
            return connections
        }
        let answer = Array("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}".utf8)
        for (index, connection) in held.sorted(by: { $0.key < $1.key }) {
            let (before, after) = around(index)
            before()
            _ = answer.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            after()
            close(connection)
        }
    }

    private func acceptForever() {
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { continue }
            guard let index = readIndex(connection) else {
                close(connection)
                continue
            }
            lock.withLock { connections[index] = connection }
        }
    }

    /// The `i` of the request's query, read up to the end of its head.
    private func readIndex(_ connection: Int32) -> Int? {
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var head = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 2_048)
        while !head.suffix(4).elementsEqual(Array("\r\n\r\n".utf8)) {
            let count = recv(connection, &buffer, buffer.count, 0)
            guard count > 0 else { return nil }
            head += buffer[..<count]
        }
        let line = String(decoding: head.prefix { $0 != UInt8(ascii: "\r") }, as: UTF8.self)
        guard let query = line.split(separator: "?").dropFirst().first, let field = query.split(separator: " ").first,
            field.hasPrefix("i=")
        else { return nil }
        return Int(field.dropFirst(2))
    }
}

private struct HelperError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
