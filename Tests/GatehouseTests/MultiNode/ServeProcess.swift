import Foundation

/// The real `gatehouse serve` binary as a child process, its output in files (so that it never blocks on a full
/// pipe), for tests that kill it.
final class ServeProcess: @unchecked Sendable {
    let process: SpawnedProcess
    let outputPath: String
    let server: TestServer

    private init(process: SpawnedProcess, outputPath: String, server: TestServer) {
        self.process = process
        self.outputPath = outputPath
        self.server = server
    }

    /// Starts `gatehouse serve --port 0 <arguments>` and waits for its banner ("listens on http://127.0.0.1:PORT").
    static func start(
        _ arguments: [String], logDirectory: String, executable: URL = GatehouseProcess.executable, seconds: Double = 90
    ) async throws -> ServeProcess {
        try FileManager.default.createDirectory(atPath: logDirectory, withIntermediateDirectories: true)
        let outputPath = (logDirectory as NSString).appendingPathComponent("serve-\(UUID().uuidString).log")
        FileManager.default.createFile(atPath: outputPath, contents: nil)
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        _ = fcntl(output.fileDescriptor, F_SETFD, FD_CLOEXEC)
        let process = try SpawnedProcess(executable.path, ["serve", "--port", "0", "--log-level", "warning"] + arguments,
                                         output: output.fileDescriptor, errors: output.fileDescriptor)
        try? output.close()
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
            if let range = text.range(of: "listens on http://127.0.0.1:") {
                let digits = text[range.upperBound...].prefix { $0.isNumber }
                if let port = Int(digits), text[range.upperBound...].dropFirst(digits.count).first == " " {
                    return ServeProcess(process: process, outputPath: outputPath, server: TestServer(port: port, dataDirectory: ""))
                }
            }
            if !process.isRunning { throw TestFailure("gatehouse serve exited with \(process.terminationStatus): \(text.suffix(2000))") }
            try await Task.sleep(for: .milliseconds(50))
        }
        process.terminate()
        throw TestFailure("gatehouse serve printed no banner within \(seconds) s")
    }

    /// Everything the process wrote.
    var output: String { (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? "" }

    /// `kill -9`, then waits until the process is gone.
    func killHard() async throws {
        kill(process.processIdentifier, SIGKILL)
        try await waitForExit()
    }

    /// SIGTERM, then waits for a clean exit.
    func stop() async throws {
        if process.isRunning { process.terminate() }
        try await waitForExit()
    }

    private func waitForExit(seconds: Double = 20) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning {
            guard Date() < deadline else { throw TestFailure("gatehouse serve did not exit within \(seconds) s") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
