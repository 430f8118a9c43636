import Foundation
import GatehouseClient
import GatehouseClientNIO
import GatehouseProtocol
import NIOSSL
import Testing

/// Certificate pinning by public key (issue 36): `PinnedHTTPTransport` over the suite's TLS server. The pin is
/// computed by `openssl` from the server's certificate, not by our code; a right pin completes the SDK's whole flow, a
/// wrong one fails before anything is sent, and pinning does not replace the chain's verification.
@Suite(.timeLimit(.minutes(3))) struct SDKPinningTests {
    /// The RFC 7469 pin of the certificate in `path`, by openssl: SPKI (DER), SHA-256, base64.
    static func opensslPin(of path: String) async throws -> String {
        let run = try await runOffThePool("/bin/sh", ["-c",
            "openssl x509 -in '\(path)' -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64"])
        guard run.status == 0 else { throw TestFailure("openssl: \(run.output)") }
        return "sha256/" + run.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func aRightPinCompletesTheFlowAndAWrongOneSendsNothing() async throws {
        let certificates = try await TestCertificates.make(commonName: "localhost")
        defer { try? FileManager.default.removeItem(atPath: certificates.directory) }
        let (server, base) = try await certificates.serveStandardPolicy()
        defer { server.stop() }
        let testCA = NIOSSLTrustRoots.certificates(try NIOSSLCertificate.fromPEMFile(certificates.caPath))
        let pin = try await Self.opensslPin(of: certificates.certificatePath)
        let otherKeysPin = try await Self.opensslPin(of: certificates.caPath)   // a real key, not the server's

        // The right pin (and a backup): the SDK's whole flow, the PIN challenge answered, the resource read.
        let pinned = try PinnedHTTPTransport(pins: [otherKeysPin, pin], trustRoots: testCA)
        let client = GatehouseClient(
            configuration: ClientConfiguration(serverURL: URL(string: base)!, applicationID: SDK.pinApp,
                                               device: DeviceData(id: "pinned-device", hardware: "TestPhone", platform: "ios 18")),
            keyStore: InMemoryKeyStore(), transport: pinned)
        let challenges = Calls<JSONObject>()
        try client.registerChallengeHandler(SDK.pinHandler(challenges))
        let balance = try await SDK.bounded(30) { try await client.resourceRequest(path: SDK.balancePath).send() }
        #expect(balance.status == 200)
        #expect(balance.text == "19938.80")
        #expect(challenges.count == 1)

        // A wrong pin: refused after the handshake, before the request; the server counted no request of it.
        let health = TransportRequest(method: "GET", url: URL(string: base + "/health")!, timeout: .seconds(10))
        let metrics = TransportRequest(method: "GET", url: URL(string: base + "/metrics")!, timeout: .seconds(10))
        let first = try await pinned.send(metrics)
        #expect(try await pinned.send(health).status == 200)
        let before = try await pinned.send(metrics)
        #expect(Self.healthCount(before.body) == Self.healthCount(first.body) + 1, "the metrics count a pinned /health")
        let wrong = try PinnedHTTPTransport(pins: [otherKeysPin], trustRoots: testCA)
        let refused = await SDK.error { _ = try await wrong.send(health) }
        #expect(refused?.code == .transport)
        #expect(refused?.message?.contains("public key is not pinned (it is \(pin))") == true, "\(String(describing: refused))")
        let after = try await pinned.send(metrics)
        #expect(Self.healthCount(before.body) == Self.healthCount(after.body), "a /health request reached the server")

        // The right pin does not stand in for the chain: the system's roots do not know the test CA.
        let untrusted = try PinnedHTTPTransport(pins: [pin])
        let unverified = await SDK.error { _ = try await untrusted.send(health) }
        #expect(unverified?.code == .transport, "\(String(describing: unverified))")

        // Malformed pins and plain HTTP are refused at once.
        #expect(throws: GatehouseClientError.self) { try PinnedHTTPTransport(pins: ["sha256/short"]) }
        #expect(throws: GatehouseClientError.self) { try PinnedHTTPTransport(pins: []) }
        let plain = await SDK.error { _ = try await pinned.send(TransportRequest(method: "GET", url: URL(string: "http://127.0.0.1:1/health")!)) }
        #expect(plain?.code == .invalidArgument)
    }

    /// `GET /health` answered 200, as the server's metrics count it.
    static func healthCount(_ metrics: Data) -> Double {
        MetricsTests.samples(String(decoding: metrics, as: UTF8.self))[#"gatehouse_http_requests_total{route="/health",method="GET",status="200"}"#] ?? 0
    }

    @Test func pinsAreReadAsRFC7469AndOkHttpWriteThem() throws {
        let digest = Array(repeating: UInt8(0xfb), count: 32)
        let standard = Data(digest).base64EncodedString()   // has '+' or '/'
        #expect(PublicKeyPin("sha256/" + standard)?.digest == digest)
        #expect(PublicKeyPin(standard)?.digest == digest)
        #expect(PublicKeyPin(standard.replacingOccurrences(of: "=", with: ""))?.digest == digest)
        #expect(PublicKeyPin("sha256/" + standard)?.description == "sha256/" + standard)
        #expect(PublicKeyPin("sha1/" + standard) == nil)
        #expect(PublicKeyPin("sha256/" + Data(digest.prefix(20)).base64EncodedString()) == nil)
    }
}
