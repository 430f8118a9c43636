import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Issue 33's descriptor drill: `gatehouse serve` and `gatehouse gateway` under `ulimit -n 128` with 300 connections
/// waiting. NIO alone spins a core on `accept4 = EMFILE`; with ``AcceptPressureHandler`` the process stops accepting
/// before its last descriptors are taken (the descriptor budget), stays idle, says so in its log and its metrics, and
/// serves again once connections close. (Its refusing path, should `accept` fail anyway: `AcceptPressureHandlerTests`.)
@Suite(.serialized, .timeLimit(.minutes(3))) struct DescriptorExhaustionTests {
    @Test(arguments: ["serve", "gateway"])
    func runningOutOfDescriptorsCostsNoCPUAndIsSaidAndRecoveredFrom(command: String) async throws {
        let folder = TestServer.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let output = folder + "/output.log"
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        let arguments = command == "serve" ? "serve --port 0 --data '\(folder)/data'" : "gateway --port 0"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "ulimit -n 128; exec '\(GatehouseProcess.executable.path)' \(arguments) --log-level warning"]
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        try? handle.close()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        var port = 0
        for _ in 0..<600 where port == 0 {
            let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
            if let range = text.range(of: "listens on http://127.0.0.1:") { port = Int(text[range.upperBound...].prefix { $0.isNumber }) ?? 0 }
            if port == 0 { try await Task.sleep(for: .milliseconds(50)) }
        }
        try #require(port > 0, "no banner: \((try? String(contentsOfFile: output, encoding: .utf8)) ?? "")")

        // 300 connections: the listening socket's backlog keeps what the process cannot accept.
        var connections: [RawHTTPConnection] = []
        for _ in 0..<300 {
            guard let connection = try? RawHTTPConnection(port: port, timeout: .seconds(5)) else { break }
            connections.append(connection)
        }
        try await Task.sleep(for: .seconds(1))
        let before = Self.cpuSeconds(process.processIdentifier)
        let start = ContinuousClock.now
        try await Task.sleep(for: .seconds(3))
        let share = (Self.cpuSeconds(process.processIdentifier) - before) / (ContinuousClock.now - start).seconds
        print("descriptor drill \(command): \(connections.count) connections, CPU \(String(format: "%.1f", share * 100)) % of a core while out of descriptors")
        #expect(share < 0.10, "\(command) spent \(share * 100) % of a core while out of descriptors")
        // It stopped accepting before its last descriptors were gone (the descriptor budget), and said so.
        #expect(((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").contains("Near the open-file limit: accepting no new connection until some close"))
        let open = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process.processIdentifier)/fd").count) ?? 0
        #expect(open > 32 && open <= 128 - 8, "\(open) of 128 descriptors open")

        // The connections go: it serves again, and its metrics counted what it refused.
        connections.removeAll()
        var metrics = ""
        for _ in 0..<100 where !metrics.contains("accept_paused_total") {
            if let answer = try? await RawHTTPConnection.exchange(port: port, target: "/metrics"), answer.status == 200 { metrics = answer.text }
            if !metrics.contains("accept_paused_total") { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(metrics.contains("accept_paused_total"), "no paused accepts counted: \(metrics.prefix(300))")
        #expect(try await RawHTTPConnection.exchange(port: port, target: "/health").status == 200)
        kill(process.processIdentifier, SIGTERM)
    }

    /// The process's user and system CPU time so far, from `/proc/<pid>/stat`.
    static func cpuSeconds(_ pid: Int32) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")") else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}
