import Foundation

/// The built `gatehouse` executable, run as a child process for tests of the command itself.
struct GatehouseProcess {
    static var executable: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/debug/gatehouse")
    }

    let process: Process
    let output: Pipe
    let errors: Pipe

    /// Starts `gatehouse` with `arguments`.
    static func start(_ arguments: [String]) throws -> GatehouseProcess {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return GatehouseProcess(process: process, output: output, errors: errors)
    }

    /// Reads standard output until a line contains `marker`, within `seconds`; returns that line.
    func waitForLine(containing marker: String, seconds: Double = 30) async throws -> String {
        let deadline = Date().addingTimeInterval(seconds)
        var buffer = ""
        let handle = output.fileHandleForReading
        while Date() < deadline {
            // On a thread of its own: a blocking read on the Swift concurrency pool would stall the test process.
            let chunk: Data = await withCheckedContinuation { continuation in
                Thread { continuation.resume(returning: handle.availableData) }.start()
            }
            if chunk.isEmpty {
                if !process.isRunning { break }
                try await Task.sleep(for: .milliseconds(50))
                continue
            }
            buffer += String(decoding: chunk, as: UTF8.self)
            if let line = buffer.split(separator: "\n").first(where: { $0.contains(marker) }) { return String(line) }
        }
        throw TestFailure("no line containing '\(marker)' within \(seconds) s; got: \(buffer.prefix(500))")
    }

    /// Waits for the process to end, within `seconds`, and returns its exit status.
    func waitForExit(seconds: Double = 30) async throws -> Int32 {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning {
            guard Date() < deadline else {
                process.terminate()
                throw TestFailure("gatehouse did not exit within \(seconds) s")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        return process.terminationStatus
    }
}
