import Foundation
import AsyncHTTPClient
import GatehouseClient
import GatehouseClientNIO
import GatehouseHTTP
import GatehouseProtocol
import NIOSSL
import Testing

/// `gatehouse serve` over TLS, checked with curl: HTTP/2 by ALPN and HTTP/1.1, TLS 1.2+ only, the certificate
/// read again on SIGHUP without a restart; readiness for load balancers.
@Suite(.timeLimit(.minutes(3))) struct TLSServingTests {
    @Test func httpsWithHTTP2ReloadedOnSIGHUP() async throws {
        let certificates = try await TestCertificates.make(commonName: "gatehouse-first")
        defer { try? FileManager.default.removeItem(atPath: certificates.directory) }
        let (server, base) = try await certificates.serve()
        defer { server.stop() }

        // HTTP/2 by ALPN, verified against the CA.
        let h2 = try await curl(["--cacert", certificates.caPath, "--http2", "-w", "%{http_version} %{http_code}", "-o", "/dev/null", base + "/health"])
        #expect(h2.status == 0, "\(h2.output)")
        #expect(h2.output == "2 200")
        // HTTP/1.1 too.
        let h1 = try await curl(["--cacert", certificates.caPath, "--http1.1", "-w", "%{http_version} %{http_code}", "-o", "/dev/null", base + "/ready"])
        #expect(h1.output == "1.1 200")
        // TLS 1.1 and below refused.
        let old = try await curl(["--cacert", certificates.caPath, "--tls-max", "1.1", base + "/health"])
        #expect(old.status != 0)
        // Plain HTTP on the TLS port gets nothing useful.
        #expect(try await curl([base.replacingOccurrences(of: "https://", with: "http://") + "/health"]).output.contains("\"ok\"") == false)

        // A new certificate, SIGHUP: new connections get it, no restart.
        let before = try await curl(["--cacert", certificates.caPath, "-v", "-o", "/dev/null", base + "/health"])
        #expect(before.output.contains("CN=gatehouse-first"))
        try await certificates.issue(commonName: "gatehouse-second")
        kill(server.process.processIdentifier, SIGHUP)
        var after = ""
        for _ in 0..<50 {
            try await Task.sleep(for: .milliseconds(100))
            after = try await curl(["--cacert", certificates.caPath, "-v", "-o", "/dev/null", base + "/health"]).output
            if after.contains("CN=gatehouse-second") { break }
        }
        #expect(after.contains("CN=gatehouse-second"), "\(after.suffix(600))")
        #expect(server.process.isRunning)
        // A broken file on SIGHUP keeps the material in use.
        try "not a certificate".write(toFile: certificates.certificatePath, atomically: true, encoding: .utf8)
        kill(server.process.processIdentifier, SIGHUP)
        try await Task.sleep(for: .milliseconds(300))
        let still = try await curl(["--cacert", certificates.caPath, "-w", "%{http_code}", "-o", "/dev/null", base + "/health"])
        #expect(still.output == "200")
    }

    /// HTTP/1.0 over TLS is answered in 1.0 and closed as over plain HTTP (it was left open: ApacheBench without `-k`
    /// and `openssl s_time -www` waited for the idle timeout), and HTTP/2 by ALPN still works beside it.
    @Test func apacheBenchOverTLSCompletesWithAndWithoutKeepAlive() async throws {
        let certificates = try await TestCertificates.make(commonName: "gatehouse-ab")
        defer { try? FileManager.default.removeItem(atPath: certificates.directory) }
        let (server, base) = try await certificates.serve()
        defer { server.stop() }
        try await ApacheBench.expectCompletes(base + "/health", requests: 300, concurrency: 4, seconds: 5)
        let h2 = try await curl(["--cacert", certificates.caPath, "--http2", "-w", "%{http_version} %{http_code}", "-o", "/dev/null", base + "/health"])
        #expect(h2.output == "2 200")
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
@Suite(.timeLimit(.minutes(3))) struct EnvironmentOptionTests {
    @Test func serveTakesItsOptionsFromTheEnvironment() async throws {
        let data = TestServer.temporaryDirectory()
        var environment = ProcessInfo.processInfo.environment
        environment["GATEHOUSE_PORT"] = "0"
        environment["GATEHOUSE_DATA"] = data
        environment["GATEHOUSE_ISSUER"] = "https://auth.example.test"
        environment["GATEHOUSE_LOG_LEVEL"] = "debug"   // the command line's warning wins
        environment["GATEHOUSE_TRUSTED_PROXY"] = "10.0.0.0/8, fd00::/8"
        let server = try GatehouseProcess.start(["--log-level", "warning"], environment: environment)   // no subcommand: serve
        defer { server.stop() }
        let banner = try await server.waitForLine(containing: "listens on http://")
        let base = try #require(banner.split(separator: " ").first { $0.hasPrefix("http://") }.map(String.init))
        let metadata = try await HTTP.send(.GET, base + "/.well-known/oauth-authorization-server")
        #expect(metadata.json?["issuer"] == "https://auth.example.test")
        #expect(FileManager.default.fileExists(atPath: data + "/gatehouse.sqlite"))
    }
}

/// Whole flows over HTTPS: the Swift SDK (PIN challenge, token, balance) and curl (a confidential client's token,
/// then the protected balance refused for lack of scope and introspection answered).
@Suite(.timeLimit(.minutes(3))) struct HTTPSFlowTests {
    @Test func theSDKAndCurlCompleteFlowsOverHTTPS() async throws {
        let certificates = try await TestCertificates.make(commonName: "localhost")
        defer { try? FileManager.default.removeItem(atPath: certificates.directory) }
        let (server, base) = try await certificates.serveStandardPolicy()
        defer { server.stop() }
        let named = base.replacingOccurrences(of: "127.0.0.1", with: "localhost")   // SNI needs a name

        // The SDK, over AsyncHTTPClient trusting only the test CA.
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(certificates.caPath))
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls, redirectConfiguration: .disallow))
        let configuration = ClientConfiguration(
            serverURL: URL(string: named)!, applicationID: SDK.pinApp, platform: "ios", version: "1.0",
            device: DeviceData(id: "https-device", hardware: "TestPhone", platform: "ios 18"))
        let client = GatehouseClient(configuration: configuration, keyStore: InMemoryKeyStore(), transport: AsyncHTTPClientTransport(client: http))
        let challenges = Calls<JSONObject>()
        try client.registerChallengeHandler(SDK.pinHandler(challenges))
        let balance = try await client.resourceRequest(path: SDK.balancePath).send()
        #expect(balance.status == 200)
        #expect(balance.text == "19938.80")
        #expect(challenges.count == 1)
        try await http.shutdown()

        // curl: a confidential client's token (reporter/other in the standard test policy), then the resource.
        let token = try await curl(["--cacert", certificates.caPath, "-u", "reporter:other", "-d", "grant_type=client_credentials&scope=accessRestricted",
                              base + "/mfp/api/az/v1/token"])
        #expect(token.status == 0, "\(token.output)")
        let accessToken = try #require((try? JSONDecoder().decode(JSON.self, from: Data(token.output.utf8)))?["access_token"]?.stringValue,
                                       "\(token.output)")
        let resource = try await curl(["--cacert", certificates.caPath, "-H", "Authorization: Bearer \(accessToken)", base + "/mfp/api/" + SDK.balancePath])
        #expect(resource.output == "19938.80")
    }
}
