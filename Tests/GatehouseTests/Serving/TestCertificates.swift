import Foundation

/// A throwaway CA and server certificates for 127.0.0.1, made with the `openssl` command in a temporary folder.
struct TestCertificates {
    let directory: String
    var caPath: String { directory + "/ca.pem" }
    var certificatePath: String { directory + "/server.pem" }
    var keyPath: String { directory + "/server-key.pem" }

    /// A new CA and a server certificate (`CN=<commonName>`, SAN IP 127.0.0.1) signed by it.
    static func make(commonName: String = "gatehouse-test") throws -> TestCertificates {
        let directory = TestServer.temporaryDirectory() + "-tls"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let certificates = TestCertificates(directory: directory)
        try run(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
                 "-subj", "/CN=Gatehouse Test CA", "-keyout", directory + "/ca-key.pem", "-out", certificates.caPath])
        try certificates.issue(commonName: commonName)
        return certificates
    }

    /// Issues (again) the server certificate and key, replacing the files.
    func issue(commonName: String) throws {
        try Self.run(["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=\(commonName)",
                      "-keyout", keyPath, "-out", directory + "/server.csr"])
        try "subjectAltName=IP:127.0.0.1,DNS:localhost\n".write(toFile: directory + "/san.ext", atomically: true, encoding: .utf8)
        try Self.run(["x509", "-req", "-in", directory + "/server.csr", "-CA", caPath, "-CAkey", directory + "/ca-key.pem",
                      "-CAcreateserial", "-days", "2", "-extfile", directory + "/san.ext", "-out", certificatePath])
    }

    static func run(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw TestFailure("openssl \(arguments.joined(separator: " ")) failed") }
    }
}

/// `curl` (a client we did not write), with a time limit; returns its exit status and standard output.
func curl(_ arguments: [String], seconds: Int = 20) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
    process.arguments = ["--silent", "--show-error", "--max-time", String(seconds)] + arguments
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
}
