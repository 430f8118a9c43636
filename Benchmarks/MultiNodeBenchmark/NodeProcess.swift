import Foundation

/// One `gatehouse serve` node in a process of its own, as in production.
final class NodeProcess: @unchecked Sendable {
    let process: Process
    let port: Int
    private let log: URL

    var pid: Int32 { process.processIdentifier }
    var api: String { "http://127.0.0.1:\(port)/mfp/api" }
    var base: String { "http://127.0.0.1:\(port)" }

    private init(process: Process, port: Int, log: URL) {
        self.process = process
        self.port = port
        self.log = log
    }

    struct StartFailure: Error, CustomStringConvertible { let description: String }

    /// Starts `gatehouse serve --port 0 <arguments>` and waits (30 s at most) for the port in its banner.
    static func start(binary: String, arguments: [String], logDirectory: URL) async throws -> NodeProcess {
        let log = logDirectory.appendingPathComponent("node-\(UUID().uuidString).log")
        FileManager.default.createFile(atPath: log.path, contents: nil)
        let handle = try FileHandle(forWritingTo: log)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = ["serve", "--port", "0", "--log-level", "warning"] + arguments
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        for _ in 0..<300 {
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.contains("listens on http://") }),
               let url = line.split(separator: " ").first(where: { $0.hasPrefix("http://") }),
               let port = url.split(separator: ":").last.flatMap({ Int($0) }) {
                return NodeProcess(process: process, port: port, log: log)
            }
            if !process.isRunning { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        process.terminate()
        throw StartFailure(description: "gatehouse serve did not start: \((try? String(contentsOf: log, encoding: .utf8)) ?? "")")
    }

    /// SIGTERM, then waits (20 s at most) for the exit.
    func stop() async {
        process.terminate()
        for _ in 0..<200 where process.isRunning { try? await Task.sleep(for: .milliseconds(100)) }
        if process.isRunning { kill(pid, SIGKILL) }
    }
}
