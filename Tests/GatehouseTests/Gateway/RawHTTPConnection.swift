import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A plain TCP connection to a loopback port that sends bytes exactly as written: URLSession and AsyncHTTPClient
/// normalise request targets (`%`, `..`, `//`), so hostile targets are sent this way. Every call is bounded by a
/// receive/send timeout and runs on its own thread, never blocking the Swift concurrency pool the servers use.
final class RawHTTPConnection: @unchecked Sendable {
    private let descriptor: Int32

    /// Connects to `127.0.0.1:port`; reads and writes give up after `timeout`. The default is long enough for an
    /// answer that waits for bcrypt while the whole suite loads both cores (CI once saw one take over 10 s); a
    /// hang still fails within the suites' time limits.
    /// With `source` (another loopback address, such as `127.0.0.2`), the connection comes from that address: a
    /// second machine, as the server sees it.
    init(port: Int, from source: String? = nil, timeout: Duration = .seconds(30)) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw TestFailure("socket() failed") }
        if let source {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            local.sin_addr.s_addr = inet_addr(source)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            // Not closed here: a class whose initializer throws once its properties are set is deinitialized, and
            // `deinit` closes it; closing twice could close a descriptor another test's socket had taken meanwhile.
            guard bound == 0 else { throw TestFailure("bind() to \(source) failed") }
        }
        let micros = timeout.components.seconds * 1_000_000 + timeout.components.attoseconds / 1_000_000_000_000
        var interval = timeval(tv_sec: Int(micros / 1_000_000), tv_usec: Int(micros % 1_000_000))
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else { throw TestFailure("connect() to port \(port) failed") }  // closed by `deinit`, as above
    }

    deinit { if descriptor >= 0 { close(descriptor) } }

    /// Writes `bytes`; `false` when the peer closed the connection.
    @discardableResult
    func send(_ bytes: [UInt8]) async -> Bool {
        await Self.onThread { [descriptor] in
            var offset = 0
            while offset < bytes.count {
                let written = bytes[offset...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                if written <= 0 { return false }
                offset += written
            }
            return true
        }
    }

    @discardableResult
    func send(_ text: String) async -> Bool { await send(Array(text.utf8)) }

    /// Sends the connection's last byte (a FIN); reading goes on.
    func shutdownWrite() { shutdown(descriptor, Int32(SHUT_WR)) }

    /// Resets the connection (k3po's `write abort`): `SO_LINGER` 0 and the socket closed, so the peer gets an RST. The
    /// descriptor then names `/dev/null` (closed in `deinit` as before), never another connection's reused number.
    func abort() {
        var option = linger(l_onoff: 1, l_linger: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
        let null = open("/dev/null", O_RDWR)
        guard null >= 0 else { return }
        dup2(null, descriptor)
        close(null)
    }

    /// Reads until the peer closes the connection or the timeout passes; `closed` tells which.
    func readToEnd() async -> (bytes: [UInt8], closed: Bool) {
        await Self.onThread { [descriptor] in
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 16 * 1024)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count == 0 { return (received, true) }
                if count < 0 { return (received, errno == ECONNRESET) }
                received += buffer[..<count]
            }
        }
    }

    /// Reads exactly `count` bytes; `nil` when the connection ends (or the timeout passes) first.
    func readBytes(count: Int) async -> [UInt8]? {
        await Self.onThread { [descriptor] in
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: max(1, min(count, 16 * 1024)))
            while received.count < count {
                let got = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, min($0.count, count - received.count)) }
                guard got > 0 else { return nil }
                received += buffer[..<got]
            }
            return received
        }
    }

    /// Reads one response (head, then a `Content-Length` body unless it answers a `HEAD`); `nil` when the connection
    /// ends first.
    func readResponse(toHEAD: Bool = false) async -> RawHTTPResponse? {
        await Self.onThread { [descriptor] in
            var received: [UInt8] = []
            var byte: UInt8 = 0
            // The head, a byte at a time so that nothing of a next response is consumed.
            while !received.ends(with: Array("\r\n\r\n".utf8)) {
                guard read(descriptor, &byte, 1) == 1 else { return nil }
                received.append(byte)
            }
            guard var response = RawHTTPResponse(head: received) else { return nil }
            var remaining = toHEAD ? 0 : Int(response.header("Content-Length") ?? "0") ?? 0
            var buffer = [UInt8](repeating: 0, count: 16 * 1024)
            while remaining > 0 {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, min($0.count, remaining)) }
                guard count > 0 else { return nil }
                response.body += buffer[..<count]
                remaining -= count
            }
            return response
        }
    }

    /// Sends `method target` with `Connection: close`, the given extra header lines and `body`, and reads the answer.
    static func exchange(port: Int, target: [UInt8], method: String = "GET", headers: [String] = [], body: [UInt8] = [],
                         from source: String? = nil) async throws -> RawHTTPResponse {
        let connection = try RawHTTPConnection(port: port, from: source)
        var request = Array("\(method) ".utf8) + target + Array(" HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n".utf8)
        for header in headers + ["Connection: close"] { request += Array("\(header)\r\n".utf8) }
        request += Array("\r\n".utf8) + body
        await connection.send(request)
        let (bytes, _) = await connection.readToEnd()
        guard let response = RawHTTPResponse(bytes) else {
            throw TestFailure("no HTTP response to \(String(decoding: target, as: UTF8.self)): \(bytes.count) bytes")
        }
        return response
    }

    static func exchange(port: Int, target: String, method: String = "GET", headers: [String] = [], from source: String? = nil) async throws
        -> RawHTTPResponse {
        try await exchange(port: port, target: Array(target.utf8), method: method, headers: headers, from: source)
    }

    private static func onThread<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: work()) }
            thread.start()
        }
    }
}

/// A response read off a ``RawHTTPConnection``.
struct RawHTTPResponse: Sendable {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    var text: String { String(decoding: body, as: UTF8.self) }
    var json: [String: String]? {
        (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: String]
    }

    func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// Parses a head (and whatever follows it as the body).
    init?(_ bytes: [UInt8]) {
        guard let end = bytes.firstRange(of: Array("\r\n\r\n".utf8)) else { return nil }
        self.init(head: Array(bytes[..<end.upperBound]))
        body = Array(bytes[end.upperBound...])
    }

    init?(head: [UInt8]) {
        let lines = String(decoding: head, as: UTF8.self).components(separatedBy: "\r\n")
        let statusLine = lines[0].split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else { return nil }
        self.status = status
        headers = lines.dropFirst().compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        body = []
    }
}

extension Array where Element == UInt8 {
    func ends(with suffix: [UInt8]) -> Bool { count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix }
}
