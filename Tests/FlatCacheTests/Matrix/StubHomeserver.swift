#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// A tiny HTTP/1.1 server on 127.0.0.1 for ``MatrixClient`` tests that need
/// no homeserver: it answers each connection with the next scripted response
/// (then closes it) and records every request it read.
///
/// It serves one connection at a time on its own `Thread` (blocking POSIX
/// sockets, not the Swift concurrency pool). When the script runs out it
/// answers `afterwards` if given (a server that goes on answering a loop
/// whose pace the test does not set), else 500 with a Matrix error body.
///
/// ```swift
/// let stub = try StubHomeserver([.init(200, #"{"joined_rooms":[]}"#)])
/// defer { stub.stop() }
/// let client = try MatrixClient(homeserver: stub.url, accessToken: "token")
/// ```
final class StubHomeserver: Sendable {
    /// One scripted answer.
    struct Response: Sendable {
        /// The HTTP status code.
        var status: Int
        /// The body, sent as `application/json`.
        var body: String
        /// Extra header fields.
        var headers: [String: String]
        /// When set, the answer waits (at most 5 s) until the gate opens: a long poll held by the server.
        var gate: Gate?
        /// When set, the body goes out one byte at a time with this pause between bytes: a server that trickles.
        var trickle: Double?

        /// An answer with `status` and `body`, and `headers` besides the ones
        /// the stub always sends, held until `gate` opens if there is one.
        init(_ status: Int, _ body: String, headers: [String: String] = [:], gate: Gate? = nil, trickle: Double? = nil) {
            self.status = status
            self.body = body
            self.headers = headers
            self.gate = gate
            self.trickle = trickle
        }
    }

    /// What holds a scripted answer until the test opens it.
    final class Gate: Sendable {
        private let semaphore = DispatchSemaphore(value: 0)
        /// How long the answer is held at most when the test never opens the gate.
        let longest: Double

        /// A gate that holds its answer until opened, `longest` seconds at most.
        init(longest: Double = 5) { self.longest = longest }

        /// Lets the held answer go.
        func open() { semaphore.signal() }

        /// Waits until opened, ``longest`` seconds at most.
        func wait() { _ = semaphore.wait(timeout: .now() + longest) }
    }

    /// One request as the stub read it.
    struct Request: Sendable {
        /// `GET`, `POST`, `PUT`…
        var method: String
        /// The path and query, as sent: `/_matrix/client/v3/sync?timeout=0`.
        var target: String
        /// The header fields, by lowercased name.
        var headers: [String: String]
        /// The body (`Content-Length` bytes).
        var body: Data
    }

    /// The base URL to give a client: `http://127.0.0.1:<port>`.
    let url: URL
    private let server: Server

    /// Starts serving `script`, one response per connection, in order, then
    /// `afterwards` to every later connection (500 when it is `nil`).
    ///
    /// - Throws: ``SocketError`` when the listening socket cannot be made.
    init(_ script: [Response], afterwards: Response? = nil) throws {
        let (listener, port) = try Self.makeListener()
        url = URL(string: "http://127.0.0.1:\(port)")!
        server = Server(listener: listener, script: script, afterwards: afterwards)
        let thread = Thread { [server] in server.run() }
        thread.name = "StubHomeserver :\(port)"
        thread.start()
    }

    deinit { server.stop() }

    /// Each request's method and target, in order: `"GET /_matrix/client/v3/sync?timeout=0"`.
    var requests: [String] { server.received.map { "\($0.method) \($0.target)" } }

    /// Each request in full, in order.
    var receivedRequests: [Request] { server.received }

    /// Closes the listening socket once the serving thread has ended; safe to call twice.
    func stop() { server.stop() }

    /// A port on 127.0.0.1 where nothing listens: bound, read, then closed again.
    static func unusedPort() throws -> UInt16 {
        let (socket, port) = try makeListener()
        close(socket)
        return port
    }

    /// A socket listening on 127.0.0.1 at a free port, and that port.
    private static func makeListener() throws -> (Int32, UInt16) {
        #if canImport(Glibc)
        let streamType = Int32(SOCK_STREAM.rawValue)
        #else
        let streamType = SOCK_STREAM
        #endif
        let listener = socket(AF_INET, streamType, 0)
        guard listener >= 0 else { throw SocketError("socket") }
        var address = sockaddr_in()
        #if canImport(Darwin)
        address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0  // the system picks a free port
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian  // 127.0.0.1
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(listener, address, length) == 0 && getsockname(listener, address, &length) == 0
            }
        }
        guard bound, listen(listener, 16) == 0 else {
            let error = SocketError("bind/listen")
            close(listener)
            throw error
        }
        return (listener, UInt16(bigEndian: address.sin_port))
    }
}

/// A socket call that failed, with `errno`'s text.
struct SocketError: Error, CustomStringConvertible {
    var description: String

    init(_ call: String) {
        description = "\(call) failed: \(String(cString: strerror(errno)))"
    }
}

/// The stub's state and its serving loop: shared by the stub and its thread
/// (the thread does not keep the stub alive, so the stub's `deinit` can stop it).
private final class Server: @unchecked Sendable {
    private let lock = NSLock()
    private let listener: Int32
    private var script: [StubHomeserver.Response]
    private let afterwards: StubHomeserver.Response?
    private var requests = [StubHomeserver.Request]()
    private var stopping = false
    private let ended = DispatchSemaphore(value: 0)

    init(listener: Int32, script: [StubHomeserver.Response], afterwards: StubHomeserver.Response?) {
        self.listener = listener
        self.script = script
        self.afterwards = afterwards
    }

    var received: [StubHomeserver.Request] { lock.withLock { requests } }
    private var isStopping: Bool { lock.withLock { stopping } }

    /// Accepts and answers connections until ``stop()``; polls in 100 ms steps to notice it.
    func run() {
        defer { ended.signal() }
        while !isStopping {
            var ready = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, 100) > 0, ready.revents & Int16(POLLIN) != 0 else { continue }
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { continue }
            serve(connection)
            close(connection)
        }
    }

    /// Ends the loop, waits (at most a second) for the thread, and closes the listening socket.
    func stop() {
        let first = lock.withLock {
            defer { stopping = true }
            return !stopping
        }
        guard first else { return }
        shutdown(listener, Int32(SHUT_RDWR))  // wakes a waiting poll at once on Linux
        _ = ended.wait(timeout: .now() + 1)
        close(listener)
    }

    /// Reads one request from `connection`, records it and answers the next scripted response.
    private func serve(_ connection: Int32) {
        var timeout = timeval(tv_sec: 1, tv_usec: 0)  // a silent client cannot hold the thread
        setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard let request = read(connection) else { return }
        let response = lock.withLock {
            requests.append(request)
            guard script.isEmpty else { return script.removeFirst() }
            return afterwards
                ?? StubHomeserver.Response(500, #"{"errcode":"M_UNKNOWN","error":"the stub homeserver's script ran out"}"#)
        }
        response.gate?.wait()
        write(response, to: connection)
    }

    /// The request head up to `\r\n\r\n`, then `Content-Length` bytes of body; `nil` if the client stops sending.
    private func read(_ connection: Int32) -> StubHomeserver.Request? {
        var data = Data()
        var headEnd: Range<Data.Index>?
        while headEnd == nil {
            guard data.count < 1 << 20, receive(connection, into: &data) else { return nil }
            headEnd = data.range(of: Data("\r\n\r\n".utf8))
        }
        guard let headEnd else { return nil }
        let lines = String(decoding: data[..<headEnd.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let requestLine = lines[0].split(separator: " ")
        guard requestLine.count == 3 else { return nil }
        var headers = [String: String]()
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let length = headers["content-length"].flatMap { Int($0) } ?? 0
        var body = Data(data[headEnd.upperBound...])
        while body.count < length {
            guard receive(connection, into: &body) else { return nil }
        }
        return StubHomeserver.Request(
            method: String(requestLine[0]), target: String(requestLine[1]), headers: headers, body: body.prefix(length))
    }

    /// Appends what `recv` gives to `data`; `false` at the end of the stream, an error or the timeout.
    private func receive(_ connection: Int32, into data: inout Data) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4_096)
        let count = recv(connection, &buffer, buffer.count, 0)
        guard count > 0 else { return false }
        data.append(contentsOf: buffer[..<count])
        return true
    }

    /// Sends `response` with `Content-Length` and `Connection: close`.
    private func write(_ response: StubHomeserver.Response, to connection: Int32) {
        let body = Data(response.body.utf8)
        var head = "HTTP/1.1 \(response.status) \(Self.reason(response.status))\r\n"
        head += "Content-Type: application/json\r\n"
        for (name, value) in response.headers.sorted(by: { $0.key < $1.key }) { head += "\(name): \(value)\r\n" }
        head += "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        #if canImport(Glibc)
        let flags = Int32(MSG_NOSIGNAL)  // a client that hung up is no SIGPIPE
        #else
        var noSignal: Int32 = 1
        setsockopt(connection, SOL_SOCKET, SO_NOSIGPIPE, &noSignal, socklen_t(MemoryLayout<Int32>.size))
        let flags: Int32 = 0
        #endif
        let bytes = [UInt8](Data(head.utf8) + body)
        var sent = 0
        let headCount = head.utf8.count
        while sent < bytes.count {
            // Trickling: the head at once, then the body a byte at a time.
            let end = response.trickle == nil || sent < headCount ? bytes.count : sent + 1
            if let pause = response.trickle, sent >= headCount { Thread.sleep(forTimeInterval: pause) }
            let count = bytes[sent..<(sent < headCount ? headCount : end)].withUnsafeBytes {
                send(connection, $0.baseAddress, $0.count, flags)
            }
            guard count > 0 else { return }
            sent += count
        }
    }

    private static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 429: "Too Many Requests"
        case 500: "Internal Server Error"
        default: "Status \(status)"
        }
    }
}
