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
/// (two threads on two cores) would stall every server the test process runs.
func runOffThePool(_ executable: String, _ arguments: [String]) async throws -> (status: Int32, output: String) {
    try await withCheckedThrowingContinuation { continuation in
        Thread {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
            let output = Pipe()
            process.standardOutput = output
            process.standardError = output
            process.standardInput = FileHandle.nullDevice
            do {
                try process.run()
            } catch {
                continuation.resume(throwing: error)
                return
            }
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            continuation.resume(returning: (process.terminationStatus, String(decoding: data, as: UTF8.self)))
        }.start()
    }
}
