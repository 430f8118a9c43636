import Foundation
import GatehouseGateway
import HummingbirdWSClient
import NIOSSL
import Testing

/// The gateway over TLS: `https` and `wss` for clients (checked with curl and a WebSocket client trusting only the
/// test CA), `https` upstreams verified against a configured CA and never without verification, health probes.
@Suite(.timeLimit(.minutes(3))) struct GatewayTLSTests {
    @Test func httpsAndWSSForClients() async throws {
        let certificates = try await TestCertificates.make(commonName: "gateway-test")
        defer { try? FileManager.default.removeItem(atPath: certificates.directory) }
        try await GatewayFixture.run({ upstream in
            var configuration = GatewayConfiguration(
                realms: [GatewayFixture.usersRealm("demo", scheme: .basic)],
                services: [ServiceConfiguration(name: "echo", path: "/echo", upstream: upstream + "/echo", realm: "demo",
                                                requireRoles: ["AUTHORIZED"], webSocket: true)])
            configuration.tls = .init(certificate: certificates.certificatePath, key: certificates.keyPath)
            return configuration
        }) { fixture in
            let base = "https://127.0.0.1:\(fixture.gatewayApp.port)"
            let ok = try await curl(["--cacert", certificates.caPath, "-u", "joe:welcome", "-w", "%{http_code}", "-o", "/dev/null", base + "/echo/hello"])
            #expect(ok.output == "200", "\(ok.output)")
            #expect(try await curl(["--cacert", certificates.caPath, "-w", "%{http_code}", "-o", "/dev/null", base + "/echo/hello"]).output == "401")
            #expect(try await curl(["--cacert", certificates.caPath, "-w", "%{http_code}", "-o", "/dev/null", base + "/health"]).output == "200")
            #expect(try await curl(["--cacert", certificates.caPath, "--tls-max", "1.1", base + "/health"]).status != 0)
            // The upstream is told the client came over https.
            let echoed = try await curl(["--cacert", certificates.caPath, "-u", "joe:welcome", "-D", "-", base + "/echo/hello"])
            #expect(echoed.status == 0)

            // wss, trusting only the test CA.
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(certificates.caPath))
            let received = ReceivedText()
            try await WebSocketClient.connect(
                url: "wss://localhost:\(fixture.gatewayApp.port)/echo",   // SNI needs a name, not an address
                configuration: .init(additionalHeaders: [.authorization: basicAuthorization("joe", "welcome")]),
                tlsConfiguration: tls, logger: GatewayFixture.logger
            ) { inbound, outbound, _ in
                try await outbound.write(.text("over wss"))
                for try await message in inbound.messages(maxSize: 1 << 16) {
                    if case .text(let text) = message { await received.set(text) }
                    break
                }
                try await outbound.close(.normalClosure, reason: nil)
            }
            #expect(await received.value?.contains("over wss") == true)
        }
    }

    @Test func httpsUpstreamsAreVerifiedNeverBlindlyTrusted() async throws {
        let certificates = try await TestCertificates.make(commonName: "upstream-test")
        defer { try? FileManager.default.removeItem(atPath: certificates.directory) }
        let (server, upstream) = try await certificates.serve()
        defer { server.stop() }
        func gateway(caFile: String?, _ body: (GatewayFixture) async throws -> Void) async throws {
            try await GatewayFixture.run({ _ in
                var configuration = GatewayConfiguration(services: [ServiceConfiguration(name: "auth", path: "/auth", upstream: upstream)])
                configuration.upstreamCAFile = caFile
                return configuration
            }, body)
        }
        // Trusting the upstream's CA: relayed.
        try await gateway(caFile: certificates.caPath) { fixture in
            let relayed = try await fixture.get("/auth/health")
            #expect(relayed.status == 200)
            #expect(String(decoding: relayed.body, as: UTF8.self).contains("ok"))
        }
        // The system's roots do not know the test CA: refused (502), never relayed unverified.
        try await gateway(caFile: nil) { fixture in
            let status = try await fixture.get("/auth/health").status
            #expect(status == 502)
        }
        // A CA file that is not PEM: a configuration error at start.
        #expect(throws: GatewayConfigurationError.self) {
            var configuration = GatewayConfiguration()
            configuration.upstreamCAFile = certificates.directory + "/server.csr"
            _ = try Gateway(configuration: configuration)
        }
    }
}

/// A value set from inside a WebSocket handler.
actor ReceivedText {
    var value: String?
    func set(_ text: String) { value = text }
}
