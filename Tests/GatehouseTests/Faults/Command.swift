import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A command run to its end from a drill.
enum Command {
    /// Runs a command to its end. Through `sh`, which writes the command's status to a file that is polled: a
    /// child's exit is not always seen by Foundation's `Process` here (a `runuser` stayed a zombie, `isRunning` true
    /// for ever), and its output goes to a file, never a pipe (the postmaster `pg_ctl start` leaves running would
    /// hold a pipe open).
    static func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let base = NSTemporaryDirectory() + "gatehouse-drill-\(UUID().uuidString)"
        defer {
            try? FileManager.default.removeItem(atPath: base + ".out")
            try? FileManager.default.removeItem(atPath: base + ".status")
        }
        func quoted(_ text: String) -> String { "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let command = ([executable] + arguments).map(quoted).joined(separator: " ")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "\(command) </dev/null >\(quoted(base + ".out")) 2>&1; echo $? >\(quoted(base + ".status.tmp")); mv \(quoted(base + ".status.tmp")) \(quoted(base + ".status"))"]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(120)
        while !FileManager.default.fileExists(atPath: base + ".status") {
            guard Date() < deadline else { throw TestFailure("\(executable) did not finish within 120 s") }
            usleep(10_000)
        }
        let status = Int32((try? String(contentsOfFile: base + ".status", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? -1
        return (status, (try? String(contentsOfFile: base + ".out", encoding: .utf8)) ?? "")
    }


    /// `sh -c command`; its exit status.
    static func shell(_ command: String) -> Int32 {
        (try? run("/bin/sh", ["-c", command]).status) ?? -1
    }
}
