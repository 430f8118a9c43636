import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A TCP forwarder on a free loopback port to `127.0.0.1:targetPort`, which a test can cut (every connection
/// dropped, new ones closed at once) and restore: a database server that goes away and comes back.
final class TCPProxy: Sendable {
    let port: Int
    private let targetPort: Int
    private let listener: Int32
    private struct State {
        var down = false
        var stopped = false
        var descriptors: Set<Int32> = []
    }
    private let state = Mutex(State())

    init(targetPort: Int) throws {
        self.targetPort = targetPort
        let listening = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(listening, socketAddress, length) == 0 && listen(listening, 64) == 0 && getsockname(listening, socketAddress, &length) == 0
            }
        }
        guard bound else { close(listening); throw TestFailure("TCPProxy: cannot listen") }
        listener = listening
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// Drops every connection and refuses new ones until ``restore()``.
    func cut() {
        let open = state.withLock { state -> Set<Int32> in
            state.down = true
            return state.descriptors
        }
        for descriptor in open { shutdown(descriptor, Int32(SHUT_RDWR)) }
    }

    func restore() { state.withLock { $0.down = false } }

    /// Stops forwarding for good.
    func stop() {
        cut()
        state.withLock { $0.stopped = true }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private func acceptLoop() {
        while true {
            let client = accept(listener, nil, nil)
            if client < 0 { return }
            let (down, stopped) = state.withLock { ($0.down, $0.stopped) }
            if stopped { close(client); return }
            if down { close(client); continue }
            let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(targetPort).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
            guard connected else { close(client); close(upstream); continue }
            state.withLock { $0.descriptors.formUnion([client, upstream]) }
            for (from, to) in [(client, upstream), (upstream, client)] {
                Thread { [self] in pump(from, to) }.start()
            }
        }
    }

    private func pump(_ from: Int32, _ to: Int32) {
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(from, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            var offset = 0
            while offset < count {
                let written = buffer[offset..<count].withUnsafeBytes { write(to, $0.baseAddress, $0.count) }
                if written <= 0 { break }
                offset += written
            }
            if offset < count { break }
        }
        shutdown(from, Int32(SHUT_RDWR))
        shutdown(to, Int32(SHUT_RDWR))
        let last = state.withLock { state -> Bool in
            let removed = state.descriptors.remove(from) != nil
            return removed
        }
        if last { close(from) }
    }
}
