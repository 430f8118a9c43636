import Foundation

/// A throwaway CA and server certificates for 127.0.0.1, made with the `openssl` command in a temporary folder.
struct TestCertificates {
    let directory: String
    var caPath: String { directory + "/ca.pem" }
    var certificatePath: String { directory + "/server.pem" }
    var keyPath: String { directory + "/server-key.pem" }

    /// A new CA and a server certificate (`CN=<commonName>`, SAN IP 127.0.0.1) signed by it.
    static func make(commonName: String = "gatehouse-test") async throws -> TestCertificates {
        let directory = TestServer.temporaryDirectory() + "-tls"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let certificates = TestCertificates(directory: directory)
        try await run(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
                 "-subj", "/CN=Gatehouse Test CA", "-keyout", directory + "/ca-key.pem", "-out", certificates.caPath])
        try await certificates.issue(commonName: commonName)
        return certificates
    }

    /// `gatehouse serve` over TLS with this server certificate (and `arguments`), and its `https://` base URL once it
    /// listens.
    func serve(_ arguments: [String] = [], data: String = TestServer.temporaryDirectory()) async throws -> (process: GatehouseProcess, base: String) {
        let server = try GatehouseProcess.start(["serve", "--port", "0", "--data", data,
                                                 "--tls-certificate", certificatePath, "--tls-key", keyPath] + arguments)
        do {
            let banner = try await server.waitForLine(containing: "listens on https://")
            guard let base = banner.split(separator: " ").first(where: { $0.hasPrefix("https://") }).map(String.init) else {
                throw TestFailure("no https:// URL in the banner: \(banner)")
            }
            return (server, base)
        } catch {
            server.stop()
            throw error
        }
    }

    /// ``serve(_:data:)`` with the suite's standard policy (``TestPolicies/standard``) and the sample adapter (the
    /// protected balance).
    func serveStandardPolicy() async throws -> (process: GatehouseProcess, base: String) {
        let directory = TestServer.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let policyPath = directory + "/policy.yaml"
        try TestPolicies.standard.write(toFile: policyPath, atomically: true, encoding: .utf8)
        return try await serve(["--policy", policyPath, "--sample-adapter", "true"], data: directory)
    }

    /// Issues (again) the server certificate and key, replacing the files.
    func issue(commonName: String) async throws {
        try await Self.run(["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=\(commonName)",
                      "-keyout", keyPath, "-out", directory + "/server.csr"])
        try "subjectAltName=IP:127.0.0.1,DNS:localhost\n".write(toFile: directory + "/san.ext", atomically: true, encoding: .utf8)
        try await Self.run(["x509", "-req", "-in", directory + "/server.csr", "-CA", caPath, "-CAkey", directory + "/ca-key.pem",
                      "-CAcreateserial", "-days", "2", "-extfile", directory + "/san.ext", "-out", certificatePath])
    }

    /// A client certificate and key (`name`.pem, `name`-key.pem) with `subject` (openssl's `/O=…/CN=…`) issued by the
    /// CA, for TLS client authentication.
    func issueClient(_ name: String, subject: String) async throws -> (certificate: String, key: String) {
        let certificate = directory + "/\(name).pem", key = directory + "/\(name)-key.pem"
        try await Self.run(["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", subject,
                            "-keyout", key, "-out", directory + "/\(name).csr"])
        try "extendedKeyUsage=clientAuth\n".write(toFile: directory + "/client.ext", atomically: true, encoding: .utf8)
        try await Self.run(["x509", "-req", "-in", directory + "/\(name).csr", "-CA", caPath, "-CAkey", directory + "/ca-key.pem",
                            "-CAcreateserial", "-days", "2", "-extfile", directory + "/client.ext", "-out", certificate])
        return (certificate, key)
    }

    /// A self-signed client certificate and key with `subject`.
    func selfSignedClient(_ name: String, subject: String) async throws -> (certificate: String, key: String) {
        let certificate = directory + "/\(name).pem", key = directory + "/\(name)-key.pem"
        try await Self.run(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
                            "-subj", subject, "-keyout", key, "-out", certificate])
        return (certificate, key)
    }

    /// The `x5t#S256` of the first certificate in a PEM file, computed by `openssl` (DER, SHA-256) and base64url here.
    static func thumbprint(of path: String) async throws -> String {
        let der = path + ".der"
        try await run(["x509", "-in", path, "-outform", "DER", "-out", der])
        let digest = try await runOffThePool("/usr/bin/openssl", ["dgst", "-sha256", "-binary", "-out", der + ".sha256", der])
        guard digest.status == 0 else { throw TestFailure("openssl dgst failed") }
        let bytes = try Data(contentsOf: URL(fileURLWithPath: der + ".sha256"))
        return bytes.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func run(_ arguments: [String]) async throws {
        let status = try await runOffThePool("/usr/bin/openssl", arguments).status
        guard status == 0 else { throw TestFailure("openssl \(arguments.joined(separator: " ")) failed") }
    }
}

/// `curl` (a client we did not write), with a time limit; returns its exit status and standard output.
func curl(_ arguments: [String], seconds: Int = 20) async throws -> (status: Int32, output: String) {
    try await runOffThePool("/usr/bin/curl", ["--silent", "--show-error", "--max-time", String(seconds)] + arguments)
}

/// Runs a program to its end on a thread of its own: waiting for a child process on the Swift concurrency pool
/// (two threads on two cores) would stall every server the test process runs. Spawned with `posix_spawn`, not
/// Foundation's `Process`: on Linux its `run()` crashes now and then (a 256-byte over-read of `/proc/self/fd`
/// entries, swift-corelibs-foundation PR #5472, not in Swift 6.3.1) — this suite spawns curl and openssl by the
/// hundred while many sockets are open, and crashed on it.
func runOffThePool(_ executable: String, _ arguments: [String]) async throws -> (status: Int32, output: String) {
    try await withCheckedThrowingContinuation { continuation in
        Thread {
            continuation.resume(with: Result { try spawnAndWait(executable, arguments) })
        }.start()
    }
}

/// Runs `executable` with `arguments`, standard input from /dev/null, standard output and error into one pipe;
/// returns its exit status (128 + the signal's number when a signal ended it) and what it wrote.
func spawnAndWait(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
    var ends: [Int32] = [0, 0]
    guard pipe(&ends) == 0 else { throw TestFailure("pipe: errno \(errno)") }
    // Not inherited by other children spawned meanwhile (the child gets the write end as 1 and 2 by dup2).
    for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_adddup2(&actions, ends[1], 1)
    posix_spawn_file_actions_adddup2(&actions, ends[1], 2)
    // Nothing else of this process's: a child holding a dup of another test's socket or pipe would keep it open
    // (Foundation's Process closed them too, which is the scan that crashed).
    closeInheritedDescriptors(&actions)
    let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
    close(ends[1])
    guard spawned == 0 else {
        close(ends[0])
        throw TestFailure("posix_spawn \(executable): error \(spawned)")
    }
    var output: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(ends[0], $0.baseAddress, $0.count) }
        if count > 0 {
            output += buffer[0..<count]
        } else if count == 0 || errno != EINTR {
            break
        }
    }
    close(ends[0])
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0, errno == EINTR {}
    let signal = status & 0x7f
    return (signal == 0 ? (status >> 8) & 0xff : 128 + signal, String(decoding: output, as: UTF8.self))
}
