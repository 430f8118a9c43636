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

    /// Ends the process: SIGTERM, then SIGKILL if it is still there `seconds` later — watched on a thread of its own,
    /// so the caller does not wait. A SIGKILL is said on standard error with the command line: a server that does not
    /// exit on SIGTERM shows in the suite's output instead of living on after it.
    func stop(within seconds: Double = 10) {
        guard process.isRunning else { return }
        let pid = process.processIdentifier
        let command = (process.arguments ?? []).prefix(8).joined(separator: " ")
        process.terminate()
        Thread {
            let deadline = Date().addingTimeInterval(seconds)
            // Foundation reaps the child once it exits; until then (or a zombie) kill(pid, 0) answers 0.
            while kill(pid, 0) == 0, Date() < deadline { usleep(50_000) }
            guard kill(pid, 0) == 0 else { return }
            FileHandle.standardError.write(Data("gatehouse \(command) (pid \(pid)) did not exit within \(seconds) s of SIGTERM: killed\n".utf8))
            kill(pid, SIGKILL)
        }.start()
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
