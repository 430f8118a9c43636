import Foundation
import Synchronization

/// A child process spawned with `posix_spawn` (Foundation's `Process.run()` crashes now and then on Linux:
/// ``spawnAndWait(_:_:)`` says why), with the members of `Process` the tests use.
final class SpawnedProcess: Sendable {
    let processIdentifier: Int32
    let arguments: [String]
    private let exit = Mutex<Int32?>(nil)

    /// Spawns `executable` with standard input from /dev/null and standard output and error into `output` and
    /// `errors` (their ends are not inherited by other children).
    convenience init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil, output: Pipe, errors: Pipe) throws {
        for end in [output.fileHandleForReading, output.fileHandleForWriting, errors.fileHandleForReading, errors.fileHandleForWriting] {
            _ = fcntl(end.fileDescriptor, F_SETFD, FD_CLOEXEC)
        }
        defer {
            try? output.fileHandleForWriting.close()
            try? errors.fileHandleForWriting.close()
        }
        try self.init(executable, arguments, environment: environment,
                      output: output.fileHandleForWriting.fileDescriptor, errors: errors.fileHandleForWriting.fileDescriptor)
    }

    /// Spawns `executable` with standard input from /dev/null, standard output and error to the descriptors given.
    init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil, output: Int32, errors: Int32) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, output, 1)
        posix_spawn_file_actions_adddup2(&actions, errors, 2)
        // Nothing else of this process's: a child holding a dup of another test's socket or pipe would keep it open
        // (Foundation's Process closed them too, which is the scan that crashed).
        closeInheritedDescriptors(&actions)
        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        let envp: [UnsafeMutablePointer<CChar>?]? = environment.map { $0.map { strdup($0.key + "=" + $0.value) } + [nil] }
        defer { for pointer in envp ?? [] { free(pointer) } }
        var pid: pid_t = 0
        let spawned = envp.map { posix_spawn(&pid, executable, &actions, nil, argv, $0) } ?? posix_spawn(&pid, executable, &actions, nil, argv, environ)
        guard spawned == 0 else { throw TestFailure("posix_spawn \(executable): error \(spawned)") }
        processIdentifier = pid
        self.arguments = arguments
    }

    /// Reaps the child if it has ended (without waiting).
    private func reap() -> Int32? {
        exit.withLock { exit in
            if exit == nil {
                var status: Int32 = 0
                if waitpid(processIdentifier, &status, WNOHANG) == processIdentifier {
                    let signal = status & 0x7f
                    exit = signal == 0 ? (status >> 8) & 0xff : 128 + signal
                }
            }
            return exit
        }
    }

    var isRunning: Bool { reap() == nil }
    /// The exit status (128 + the signal's number when a signal ended it); -1 while it runs.
    var terminationStatus: Int32 { reap() ?? -1 }
    func terminate() { kill(processIdentifier, SIGTERM) }
}

/// Adds to `actions` the closing of every descriptor from 3 up in the child: glibc's
/// `posix_spawn_file_actions_addclosefrom_np` (2.34+), looked up at run time — Swift's Glibc module does not import
/// it (it is a GNU extension).
func closeInheritedDescriptors(_ actions: inout posix_spawn_file_actions_t) {
    typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else {
        preconditionFailure("glibc 2.34 or later is needed (posix_spawn_file_actions_addclosefrom_np)")
    }
    _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
}

/// The built `gatehouse` executable, run as a child process for tests of the command itself.
struct GatehouseProcess {
    /// `.build/debug/gatehouse`, or the one `GATEHOUSE_TEST_EXECUTABLE` names (an installed package's, or an
    /// earlier commit's build to show a test failing without a fix).
    static var executable: URL {
        if let path = ProcessInfo.processInfo.environment["GATEHOUSE_TEST_EXECUTABLE"], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/debug/gatehouse")
    }

    let process: SpawnedProcess
    let output: Pipe
    let errors: Pipe

    /// Starts `gatehouse` with `arguments` (and `environment` in place of this process's).
    static func start(_ arguments: [String], environment: [String: String]? = nil) throws -> GatehouseProcess {
        let output = Pipe()
        let errors = Pipe()
        let process = try SpawnedProcess(executable.path, arguments, environment: environment, output: output, errors: errors)
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
        let command = process.arguments.prefix(8).joined(separator: " ")
        process.terminate()
        let process = self.process
        Thread {
            let deadline = Date().addingTimeInterval(seconds)
            // `isRunning` reaps the child once it has exited.
            while process.isRunning, Date() < deadline { usleep(50_000) }
            guard process.isRunning else { return }
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
