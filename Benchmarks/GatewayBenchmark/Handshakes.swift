import BenchmarkSupport
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// WebSocket handshakes per second through the gateway, each on a new connection with `Basic` credentials and the
/// upstream connected: a plain RFC 6455 upgrade (credentials on the upgrade) against KAAZING's extended handshake
/// (`x-kaazing-handshake`: the outer `101` and balancer frame, the request inside with the credentials, the inner
/// `101`, its empty frame and the balancer frame again). Each opened WebSocket is closed by the client (a close frame,
/// then the gateway's close). `workers` threads, each one connection at a time, with blocking sockets.
enum Handshakes {
    enum Kind { case plain, kaazing }

    /// Completed handshakes per second over `seconds`.
    static func rate(port: Int, kind: Kind, authorization: String, workers: Int, seconds: Double) throws -> (count: Int, perSecond: Double) {
        let deadline = Date().addingTimeInterval(seconds)
        let state = Mutex((completed: 0, failure: String?.none))
        let group = DispatchGroup()
        let start = Date()
        for _ in 0..<workers {
            group.enter()
            Thread {
                defer { group.leave() }
                var mine = 0
                while Date() < deadline {
                    do {
                        try handshake(port: port, kind: kind, authorization: authorization)
                        mine += 1
                    } catch {
                        state.withLock { $0.failure = $0.failure ?? "\(error)" }
                        break
                    }
                }
                state.withLock { $0.completed += mine }
            }.start()
        }
        group.wait()
        let (completed, failure) = state.withLock { ($0.completed, $0.failure) }
        if let failure { throw Wrk.Failure(description: "a \(kind) handshake failed: \(failure)") }
        return (completed, Double(completed) / Date().timeIntervalSince(start))
    }

    private static let mask: [UInt8] = [0x11, 0x22, 0x33, 0x44]

    private static func masked(_ opcode: UInt8, _ payload: [UInt8]) -> [UInt8] {
        var frame: [UInt8] = [0x80 | opcode]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else {
            frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        }
        return frame + mask + payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
    }

    /// One handshake on a new connection, then the close.
    static func handshake(port: Int, kind: Kind, authorization: String) throws {
        let socket = try BlockingSocket(port: port)
        var upgrade = "GET /echo?.kl=Y HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        switch kind {
        case .plain: upgrade += "Authorization: \(authorization)\r\n\r\n"
        case .kaazing: upgrade += "Sec-WebSocket-Protocol: x-kaazing-handshake\r\n\r\n"
        }
        try socket.write(Array(upgrade.utf8))
        var buffer = try socket.read(until: { headEnd(in: $0).map { $0 + (kind == .kaazing ? 6 : 0) } })
        guard buffer.starts(with: Array("HTTP/1.1 101".utf8)) else { throw Wrk.Failure(description: "no 101: \(String(decoding: buffer.prefix(80), as: UTF8.self))") }
        if kind == .kaazing {
            buffer.removeAll()
            try socket.write(masked(0x1, Array("GET /echo HTTP/1.1\r\nAuthorization: \(authorization)\r\n\r\n".utf8)))
            // The inner 101, the empty frame, the balancer frame.
            let frames = try socket.read(until: { bytes in frameEnds(in: bytes, count: 3) })
            guard frames.count > 16, Array(frames[4..<16]) == Array("HTTP/1.1 101".utf8) else {
                throw Wrk.Failure(description: "no inner 101: \(String(decoding: frames.prefix(80), as: UTF8.self))")
            }
        }
        try socket.write(masked(0x8, [0x03, 0xE8]))
        socket.drain()
    }

    private static func headEnd(in bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4) where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index + 4
        }
        return nil
    }

    /// Where `count` unmasked frames end in `bytes`, once they are all there.
    private static func frameEnds(in bytes: [UInt8], count: Int) -> Int? {
        var index = 0
        for _ in 0..<count {
            guard bytes.count >= index + 2 else { return nil }
            var length = Int(bytes[index + 1] & 0x7F)
            index += 2
            if length == 126 {
                guard bytes.count >= index + 2 else { return nil }
                length = Int(bytes[index]) << 8 | Int(bytes[index + 1])
                index += 2
            }
            index += length
        }
        return bytes.count >= index ? index : nil
    }
}

/// A loopback TCP connection with blocking reads and writes, each bounded by 10 s.
final class BlockingSocket {
    private let descriptor: Int32

    init(port: Int) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Wrk.Failure(description: "socket() failed") }
        var interval = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &interval, socklen_t(MemoryLayout<timeval>.size))
        var noDelay: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            close(descriptor)
            throw Wrk.Failure(description: "connect() to port \(port) failed")
        }
    }

    deinit { close(descriptor) }

    func write(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            guard written > 0 else { throw Wrk.Failure(description: "write failed") }
            offset += written
        }
    }

    /// Reads until `complete` says how many bytes make the whole answer; returns them (and keeps nothing after).
    func read(until complete: ([UInt8]) -> Int?) throws -> [UInt8] {
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            if let end = complete(received) { return Array(received[..<end]) }
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { throw Wrk.Failure(description: "the connection ended after \(received.count) bytes") }
            received += chunk[..<count]
        }
    }

    /// Reads until the peer closes the connection (or 10 s pass).
    func drain() {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while chunk.withUnsafeMutableBytes({ Glibc.read(descriptor, $0.baseAddress, $0.count) }) > 0 {}
    }
}
