import BenchmarkSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The gateway's process as Linux's `/proc` shows it: which process it is, its memory, its descriptors and the TCP
/// connections among them — so that the memory per idle WebSocket is read from the gateway itself, while the
/// WebSockets asked for are open through it.
struct GatewayProcess {
    let pid: Int32
    /// The port the gateway accepts its clients on.
    let port: Int
    /// The upstream's port (the echo service).
    let upstreamPort: Int

    /// The process's arguments, as `/proc/<pid>/cmdline` has them.
    var arguments: [String] {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return [] }
        return data.split(separator: 0, omittingEmptySubsequences: false).dropLast().map { String(decoding: $0, as: UTF8.self) }
    }

    /// A field of `/proc/<pid>/status` ("PPid", "VmRSS", "RssAnon"), as written there.
    func status(_ field: String) -> String? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") })
        else { return nil }
        return line.dropFirst(field.count + 1).trimmingCharacters(in: .whitespaces)
    }

    /// The resident memory in bytes (`VmRSS`).
    var residentBytes: Int? { residentMemory(of: pid) }

    /// Throws unless the process is this executable run as the gateway (`--serve-gateway`) by this process: the
    /// memory read is then the gateway's, not a wrapper's or the load's.
    func verify() throws {
        let ownExecutable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")
        guard arguments.dropFirst().first == "--serve-gateway", executable == ownExecutable,
              status("PPid") == String(getpid())
        else {
            throw Wrk.Failure(description: "pid \(pid) is not this benchmark's gateway: cmdline \(arguments), exe \(executable ?? "?"), "
                              + "PPid \(status("PPid") ?? "?") (this process is \(getpid()))")
        }
    }

    /// The process's descriptors now (`/proc/<pid>/fd`).
    var descriptors: Int { descriptorTargets().count }

    /// The process's soft limit of descriptors (`/proc/<pid>/limits`, "Max open files").
    var descriptorLimit: Int? {
        guard let limits = try? String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8),
              let line = limits.split(separator: "\n").first(where: { $0.hasPrefix("Max open files") })
        else { return nil }
        return Int(line.dropFirst("Max open files".count).split(separator: " ").first ?? "")
    }

    /// The gateway's TCP connections by what they are.
    struct Connections: CustomStringConvertible {
        /// Sockets among the process's descriptors.
        var sockets = 0
        /// Established connections accepted on the gateway's port: its clients.
        var clients = 0
        /// Established connections to the upstream's port: WebSockets' upstream sides and pooled HTTP connections.
        var upstream = 0

        var description: String { "\(sockets) sockets, \(clients) clients connected, \(upstream) connections to the upstream" }
    }

    /// The process's sockets, and its established TCP connections from `/proc/<pid>/net/tcp` (and `tcp6`) whose
    /// inodes are among its descriptors.
    func connections() -> Connections {
        var inodes = Set<Substring>()
        for target in descriptorTargets() where target.hasPrefix("socket:[") {
            inodes.insert(target.dropFirst("socket:[".count).dropLast())
        }
        var connections = Connections(sockets: inodes.count)
        for table in ["tcp", "tcp6"] {
            guard let text = Self.read("/proc/\(pid)/net/\(table)") else { continue }
            // "sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode ..."
            for line in text.split(separator: "\n").dropFirst() {
                let fields = line.split(separator: " ")
                guard fields.count > 9, fields[3] == "01", inodes.contains(fields[9]) else { continue }  // 01: ESTABLISHED
                if Self.port(fields[1]) == port { connections.clients += 1 }
                if Self.port(fields[2]) == upstreamPort { connections.upstream += 1 }
            }
        }
        return connections
    }

    /// A file of `/proc` read to its end: the kernel hands `/proc/<pid>/net/tcp` out a page per `read` (about 27
    /// connections), and Foundation's `String(contentsOfFile:)` read none of the gateway's thousands.
    private static func read(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { return count == 0 ? String(decoding: bytes, as: UTF8.self) : nil }
            bytes.append(contentsOf: chunk[0..<count])
        }
    }

    /// The port of an address of `/proc/net/tcp` ("0100007F:1F90": hexadecimal after the colon).
    private static func port(_ address: Substring) -> Int? {
        address.split(separator: ":").last.flatMap { Int($0, radix: 16) }
    }

    /// What each of the process's descriptors refers to ("socket:[123]", a path, "anon_inode:[eventpoll]").
    private func descriptorTargets() -> [String] {
        let folder = "/proc/\(pid)/fd"
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return [] }
        var buffer = [CChar](repeating: 0, count: 256)
        return names.compactMap { name in
            let length = readlink(folder + "/" + name, &buffer, buffer.count - 1)
            guard length > 0 else { return nil }
            return String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }
}
