import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A PostgreSQL cluster of a fault drill's own (Debian's binaries, a temporary folder, a free loopback port, trust
/// authentication), which the drill stops, restarts, freezes and thaws under load without disturbing the suite's
/// shared PostgreSQL. As root, PostgreSQL runs as `postgres` (it refuses root).
final class ThrowawayCluster: @unchecked Sendable {
    let directory: String
    let port: Int
    private let bin: String

    var url: String { "postgres://postgres@127.0.0.1:\(port)/postgres?sslmode=disable" }

    /// Creates the cluster (not started).
    init() throws {
        guard let bin = ["/usr/lib/postgresql/15/bin"].first(where: { FileManager.default.isExecutableFile(atPath: $0 + "/pg_ctl") })
            ?? (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql"))?.sorted().reversed()
            .map({ "/usr/lib/postgresql/\($0)/bin" }).first(where: { FileManager.default.isExecutableFile(atPath: $0 + "/pg_ctl") })
        else { throw TestFailure("no PostgreSQL server binaries (apt-get install postgresql)") }
        self.bin = bin
        directory = NSTemporaryDirectory() + "gatehouse-drill-pg-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        port = try Self.freePort()
        if getuid() == 0 { _ = try Command.run("/bin/chown", ["postgres:", directory]) }
        let initdb = try run(bin + "/initdb", ["-D", directory + "/data", "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-locale", "--no-sync"])  // the drill needs no durable initdb; the server itself runs with fsync on: an immediate stop is a crash and what was answered 201 must survive it
        guard initdb.status == 0 else { throw TestFailure("initdb failed: \(initdb.output)") }
    }

    deinit {
        _ = try? run(bin + "/pg_ctl", ["-D", directory + "/data", "-m", "immediate", "-w", "-t", "20", "stop"])
        try? FileManager.default.removeItem(atPath: directory)
    }

    func start() throws {
        let started = try run(bin + "/pg_ctl", [
            "-D", directory + "/data", "-l", directory + "/postgres.log", "-w", "-t", "60",
            "-o", "-c listen_addresses=127.0.0.1 -p \(port) -k \(directory) -c max_connections=200",
            "start",
        ])
        guard started.status == 0 else { throw TestFailure("PostgreSQL did not start: \(started.output) \(log.suffix(1500))") }
    }

    /// `pg_ctl stop -m fast|immediate`.
    func stop(_ mode: String) throws {
        let stopped = try run(bin + "/pg_ctl", ["-D", directory + "/data", "-m", mode, "-w", "-t", "60", "stop"])
        guard stopped.status == 0 else { throw TestFailure("PostgreSQL did not stop (\(mode)): \(stopped.output)") }
    }

    /// SIGSTOP (or SIGCONT) to the postmaster and every backend: a frozen database, connections open, nothing answered.
    func signalAll(_ signal: Int32) throws {
        let pidText = try String(contentsOfFile: directory + "/data/postmaster.pid", encoding: .utf8)
        guard let postmaster = pidText.split(separator: "\n").first.flatMap({ Int32($0) }) else { throw TestFailure("no postmaster pid") }
        var pids = [postmaster]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry), let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { continue }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 2, Int32(fields[1]) == postmaster { pids.append(pid) }
        }
        for pid in pids { kill(pid, signal) }
    }

    var log: String { (try? String(contentsOfFile: directory + "/postgres.log", encoding: .utf8)) ?? "" }

    private func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        if getuid() == 0 { return try Command.run("/usr/sbin/runuser", ["-u", "postgres", "--", executable] + arguments) }
        return try Command.run(executable, arguments)
    }

    private static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
            }
        }
        guard bound else { throw TestFailure("no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
