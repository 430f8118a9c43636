import Foundation
import GatehouseHTTP
import Testing

/// `gatehouse serve` over TLS, checked with curl: HTTP/2 by ALPN and HTTP/1.1, TLS 1.2+ only, the certificate
/// read again on SIGHUP without a restart; readiness for load balancers.
@Suite(.timeLimit(.minutes(2))) struct TLSServingTests {
    @Test func httpsWithHTTP2ReloadedOnSIGHUP() async throws {
        let certificates = try TestCertificates.make(commonName: "gatehouse-first")
        defer { try? FileManager.default.removeItem(atPath: certificates.directory) }
        let data = TestServer.temporaryDirectory()
        let server = try GatehouseProcess.start([
            "serve", "--port", "0", "--data", data, "--tls-certificate", certificates.certificatePath, "--tls-key", certificates.keyPath,
        ])
        defer { server.process.terminate() }
        let banner = try await server.waitForLine(containing: "listens on https://")
        let base = try #require(banner.split(separator: " ").first { $0.hasPrefix("https://") }.map(String.init))

        // HTTP/2 by ALPN, verified against the CA.
        let h2 = try curl(["--cacert", certificates.caPath, "--http2", "-w", "%{http_version} %{http_code}", "-o", "/dev/null", base + "/health"])
        #expect(h2.status == 0, "\(h2.output)")
        #expect(h2.output == "2 200")
        // HTTP/1.1 too.
        let h1 = try curl(["--cacert", certificates.caPath, "--http1.1", "-w", "%{http_version} %{http_code}", "-o", "/dev/null", base + "/ready"])
        #expect(h1.output == "1.1 200")
        // TLS 1.1 and below refused.
        let old = try curl(["--cacert", certificates.caPath, "--tls-max", "1.1", base + "/health"])
        #expect(old.status != 0)
        // Plain HTTP on the TLS port gets nothing useful.
        #expect(try curl([base.replacingOccurrences(of: "https://", with: "http://") + "/health"]).output.contains("\"ok\"") == false)

        // A new certificate, SIGHUP: new connections get it, no restart.
        let before = try curl(["--cacert", certificates.caPath, "-v", "-o", "/dev/null", base + "/health"])
        #expect(before.output.contains("CN=gatehouse-first"))
        try certificates.issue(commonName: "gatehouse-second")
        kill(server.process.processIdentifier, SIGHUP)
        var after = ""
        for _ in 0..<50 {
            try await Task.sleep(for: .milliseconds(100))
            after = try curl(["--cacert", certificates.caPath, "-v", "-o", "/dev/null", base + "/health"]).output
            if after.contains("CN=gatehouse-second") { break }
        }
        #expect(after.contains("CN=gatehouse-second"), "\(after.suffix(600))")
        #expect(server.process.isRunning)
        // A broken file on SIGHUP keeps the material in use.
        try "not a certificate".write(toFile: certificates.certificatePath, atomically: true, encoding: .utf8)
        kill(server.process.processIdentifier, SIGHUP)
        try await Task.sleep(for: .milliseconds(300))
        let still = try curl(["--cacert", certificates.caPath, "-w", "%{http_code}", "-o", "/dev/null", base + "/health"])
        #expect(still.output == "200")
    }

    @Test func readinessNamesItsChecks() async throws {
        try await TestServer.run { server in
            let ready = try await HTTP.send(.GET, server.baseURL + "/ready")
            #expect(ready.status == 200)
            #expect(ready.json?["status"] == "ready")
            #expect(ready.json?["checks"]?["store"] == "ok")
            #expect(ready.json?["checks"]?["signingKeys"] == "ok")
        }
    }

    @Test func onlyLoopbackCountsAsPrivate() {
        #expect(ServingWarnings.isLoopback("127.0.0.1"))
        #expect(ServingWarnings.isLoopback("localhost"))
        #expect(ServingWarnings.isLoopback("::1"))
        #expect(!ServingWarnings.isLoopback("0.0.0.0"))
        #expect(!ServingWarnings.isLoopback("192.168.1.4"))
        #expect(!ServingWarnings.isLoopback("127.example.com"))
    }
}

/// Every option of `serve` from the environment, the command line winning (12-factor).
@Suite(.timeLimit(.minutes(1))) struct EnvironmentOptionTests {
    @Test func serveTakesItsOptionsFromTheEnvironment() async throws {
        let data = TestServer.temporaryDirectory()
        let process = Process()
        process.executableURL = GatehouseProcess.executable
        process.arguments = ["--log-level", "warning"]   // no subcommand: serve
        var environment = ProcessInfo.processInfo.environment
        environment["GATEHOUSE_PORT"] = "0"
        environment["GATEHOUSE_DATA"] = data
        environment["GATEHOUSE_ISSUER"] = "https://auth.example.test"
        environment["GATEHOUSE_LOG_LEVEL"] = "debug"   // the command line's warning wins
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { process.terminate() }
        let server = GatehouseProcess(process: process, output: output, errors: Pipe())
        let banner = try await server.waitForLine(containing: "listens on http://")
        let base = try #require(banner.split(separator: " ").first { $0.hasPrefix("http://") }.map(String.init))
        let metadata = try await HTTP.send(.GET, base + "/.well-known/oauth-authorization-server")
        #expect(metadata.json?["issuer"] == "https://auth.example.test")
        #expect(FileManager.default.fileExists(atPath: data + "/gatehouse.sqlite"))
    }
}
