import Foundation
import Testing

/// The Kerberos realm the Negotiate tests use: `GATEHOUSE_TEST_KDC_*` and `KRB5_CONFIG` (scripts/test starts a
/// throwaway MIT KDC with scripts/throwaway-kdc). Without them a test fails under `CI` and is skipped (with a
/// note) otherwise.
struct TestKDC: Sendable {
    static let variable = "GATEHOUSE_TEST_KDC_REALM"

    let realm: String
    let keytab: String
    let password: String
    let directory: String

    /// The service principal whose keys are in ``keytab``.
    var service: String { "HTTP/localhost@\(realm)" }
    /// A service of the realm whose keys the gateway does not have.
    var otherService: String { "HTTP/otherhost@\(realm)" }

    static func current() throws -> TestKDC {
        let environment = ProcessInfo.processInfo.environment
        guard let realm = environment[variable], !realm.isEmpty, let keytab = environment["GATEHOUSE_TEST_KDC_KEYTAB"],
              let password = environment["GATEHOUSE_TEST_KDC_PASSWORD"], let directory = environment["GATEHOUSE_TEST_KDC_DIR"],
              environment["KRB5_CONFIG"] != nil else {
            let message = "\(variable) (and KRB5_CONFIG, GATEHOUSE_TEST_KDC_KEYTAB, _PASSWORD, _DIR) are not set: run scripts/test, "
                + "which starts a throwaway MIT KDC, or `source scripts/throwaway-kdc; start_throwaway_kdc` first"
            if environment["CI"] != nil { throw TestFailure("Kerberos tests cannot run under CI: \(message)") }
            Issue.record("Kerberos case skipped: \(message)", severity: .warning)
            try Test.cancel("Kerberos case skipped: \(message)")
        }
        return TestKDC(realm: realm, keytab: keytab, password: password, directory: directory)
    }

    /// `kinit`s `user` into a new credential cache of its own and returns it (`FILE:<path>`).
    func kinit(_ user: String, lifetime: String? = nil) async throws -> String {
        let cache = "FILE:\(directory)/cc-\(user)-\(UUID().uuidString)"
        let arguments = ["kinit", "-c", cache] + (lifetime.map { ["-l", $0] } ?? []) + [user]
        let result = try await Self.run(arguments, input: password + "\n")
        guard result.status == 0 else { throw TestFailure("kinit \(user) failed: \(result.output)") }
        return cache
    }

    /// A credential cache with no ticket in it.
    var emptyCache: String { "FILE:\(directory)/cc-empty-\(UUID().uuidString)" }

    /// Runs a command (bounded by `timeout`), with `KRB5CCNAME` set when `cache` is given; stdout and stderr together.
    static func run(_ arguments: [String], input: String? = nil, cache: String? = nil, seconds: Int = 20) async throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/timeout")
        process.arguments = ["--kill-after=5", "\(seconds)"] + arguments
        var environment = ProcessInfo.processInfo.environment
        if let cache { environment["KRB5CCNAME"] = cache }
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        let stdin = Pipe()
        process.standardInput = stdin
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
                return
            }
            if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
            try? stdin.fileHandleForWriting.close()
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        return (status, String(decoding: data, as: UTF8.self))
    }

    /// `curl --negotiate -u :` (an independent SPNEGO client) with `cache`: the status and the response's header block.
    static func curl(_ url: String, cache: String) async throws -> (status: Int, headers: String) {
        // `localhost` names the service principal (HTTP/localhost); it is pinned to 127.0.0.1, where the gateway
        // listens: resolved to ::1 first, the port may belong to another test's listener there (a full run once saw
        // every curl of one test time out).
        var pin: [String] = []
        if let components = URLComponents(string: url), components.host == "localhost", let port = components.port {
            pin = ["--resolve", "localhost:\(port):127.0.0.1"]
        }
        let result = try await run(["curl", "--negotiate", "-u", ":", "-s", "-o", "/dev/null", "-D", "-", "-w", "%{http_code}",
                                    "--max-time", "20"] + pin + [url], cache: cache)
        let lines = result.output.split(whereSeparator: \.isNewline)
        guard let last = lines.last, let status = Int(last.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw TestFailure("curl said \(result.output)")
        }
        return (status, result.output)
    }
}
