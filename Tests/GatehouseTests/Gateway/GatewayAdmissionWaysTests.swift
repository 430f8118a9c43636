import AsyncHTTPClient
import Foundation
import GatehouseClient
import GatehouseClientWebSocket
@testable import GatehouseGateway
import GatehouseHTTP
import GatehouseProtocol
import GatehouseResourceServer
import NIOSSL
import Testing

/// Every way into a service carries the same client identity (``AdmissionRequest``): a token bound to a TLS client
/// certificate admits from a connection presenting that certificate and from no other, and each admission is traced
/// under its request — over plain HTTP, a plain WebSocket upgrade, KAAZING's extended handshake and its emulated
/// transport. Before, the extended handshake decided without the certificate (a bound token never matched) and
/// without the span.
@Suite(.serialized, .timeLimit(.minutes(3))) struct GatewayAdmissionWaysTests {
    /// One token, bound to one certificate, never remembered: every admission with it runs (and is traced) on a task.
    struct BoundTokenVerifier: TokenVerifier {
        let thumbprint: String
        func verify(_ token: String) async throws(TokenRejection) -> VerifiedToken {
            guard token == "bound-token" else { throw .invalidToken }
            return VerifiedToken(scope: Scope("AUTHORIZED"), clientID: "app", userID: "joe", checks: [], expiresAt: Date().addingTimeInterval(3600),
                                 certificateThumbprint: thumbprint)
        }
    }

    static func clientTLS(_ client: (certificate: String, key: String), ca: String) throws -> TLSConfiguration {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .file(ca)
        tls.certificateChain = try NIOSSLCertificate.fromPEMFile(client.certificate).map { .certificate($0) }
        tls.privateKey = .privateKey(try NIOSSLPrivateKey(file: client.key, format: .pem))
        return tls
    }

    /// The four ways in with `tls`'s certificate and the token: whether each was let in.
    static func ways(port: Int, tls: TLSConfiguration) async throws -> [String: Bool] {
        var results: [String: Bool] = [:]
        let http = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
        do {
            var request = HTTPClientRequest(url: "https://127.0.0.1:\(port)/api/x")
            request.headers.add(name: "Authorization", value: "Bearer bound-token")
            results["http"] = try await http.execute(request, timeout: .seconds(10)).status.code == 200
        } catch {
            try? await http.shutdown()
            throw error
        }
        try await http.shutdown()
        let configuration = GatewayWebSocketConfiguration(headers: [("Authorization", "Bearer bound-token")], connectTimeout: .seconds(5),
                                                          handshakeTimeout: .seconds(10), tls: tls)
        let url = "wss://127.0.0.1:\(port)/api/echo"
        func echoed(_ connect: () async throws -> Void) async throws -> Bool {
            do {
                try await connect()
                return true
            } catch let error as GatewayClientError where error.code == .refused && error.status == 401 {
                return false
            }
        }
        results["upgrade"] = try await echoed {
            try await GatewayWebSocketClient.connect(url: url, configuration: configuration) { messages, outbound in
                try await Self.echo(messages, outbound)
            }
        }
        results["extended handshake"] = try await echoed {
            try await GatewayWebSocketClient.connectInBand(url: url, configuration: configuration, logger: GatewayFixture.logger) { messages, outbound, _ in
                try await Self.echo(messages, outbound)
            }
        }
        results["emulated"] = try await echoed {
            try await GatewayWebSocketClient.connectEmulated(url: url, configuration: configuration, logger: GatewayFixture.logger) { messages, outbound, _ in
                try await Self.echo(messages, outbound)
            }
        }
        return results
    }

    static func echo(_ messages: AsyncThrowingStream<GatewayWebSocketMessage, any Error>, _ outbound: GatewayWebSocketWriter) async throws {
        try await outbound.write(.text("admitted"))
        for try await message in messages where message == .text("admitted") { return }
        throw TestFailure("no echo")
    }

    @Test func aCertificateBoundTokenAdmitsOnEveryWayOnlyWithItsCertificateAndEachAdmissionIsTraced() async throws {
        let pki = try await TestCertificates.make(commonName: "127.0.0.1")
        defer { try? FileManager.default.removeItem(atPath: pki.directory) }
        let bound = try await pki.issueClient("bound", subject: "/CN=bound")
        let other = try await pki.issueClient("other", subject: "/CN=other")
        let thumbprint = try await TestCertificates.thumbprint(of: bound.certificate)
        let module = GatehouseTokenLoginModule(verifier: BoundTokenVerifier(thumbprint: thumbprint))
        let collector = try await TraceCollector.start()
        let tracer = OTLPTracer(exporter: collector.exporter(serviceName: "gatehouse-gateway"))
        try await GatewayFixture.run(customModules: ["bound-token": module], tracer: tracer, { upstream in
            var configuration = GatewayConfiguration(
                realms: [RealmConfiguration(name: "api", scheme: .bearer, loginModules: [LoginModuleConfiguration(type: "bound-token", flag: .required)])],
                services: [ServiceConfiguration(name: "api", path: "/api", upstream: upstream, realm: "api", requireRoles: ["AUTHORIZED"], webSocket: true)])
            configuration.tls = .init(certificate: pki.certificatePath, key: pki.keyPath, clientCertificates: true)
            return configuration
        }) { fixture in
            let admitted = try await Self.ways(port: fixture.gatewayApp.port, tls: Self.clientTLS(bound, ca: pki.caPath))
            #expect(admitted == ["http": true, "upgrade": true, "extended handshake": true, "emulated": true])
            let refused = try await Self.ways(port: fixture.gatewayApp.port, tls: Self.clientTLS(other, ca: pki.caPath))
            #expect(refused == ["http": false, "upgrade": false, "extended handshake": false, "emulated": false])
        }
        // Eight admissions (four ways, two certificates), each a child of its request's server span: the two of the
        // emulated transport under its create, the extended handshake's under its upgrade.
        let spans = try await collector.spans { $0.named("admission api").count >= 8 }
        let admissions = spans.named("admission api")
        #expect(admissions.count == 8)
        let parents = admissions.map { admission in spans.first { $0.spanId == admission.parentSpanId }?.name ?? "none" }
        #expect(parents.sorted() == Array(repeating: "GET /api", count: 6) + ["POST /api", "POST /api"], "\(parents)")
        await collector.stop()
    }
}
