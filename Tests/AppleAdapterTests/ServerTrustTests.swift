import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import GatehouseClient
import GatehouseClientAppleAdapters
import GatehouseProtocol
import SecurityStandIn
import Testing

/// `URLSessionTransport`'s delegate on Apple platforms: redirects refused and servers' keys pinned. Its methods are held
/// to Apple's signatures (a slip fails this build), and its server-trust method runs against stand-in trusts of
/// certificates and pins made by openssl.
@Suite(.timeLimit(.minutes(1))) struct ServerTrustTests {
    /// A certificate (DER) and its pin, as openssl computes them: `openssl x509 -pubkey | openssl pkey -pubin -outform
    /// der | openssl dgst -sha256 -binary | base64`.
    static func certificate(_ algorithm: [String]) throws -> (der: Data, pin: String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("trust-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = directory.appendingPathComponent("key.pem").path, pem = directory.appendingPathComponent("cert.pem").path
        let der = directory.appendingPathComponent("cert.der").path
        try run("openssl req -x509 \(algorithm.joined(separator: " ")) -nodes -subj /CN=gatehouse.example -days 1 -keyout \(key) -out \(pem)")
        try run("openssl x509 -in \(pem) -outform der -out \(der)")
        let pin = try run("openssl x509 -in \(pem) -pubkey -noout | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64")
        return (try Data(contentsOf: URL(fileURLWithPath: der)), "sha256/" + pin.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    @discardableResult
    static func run(_ command: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw CocoaError(.fileReadUnknown) }
        return String(decoding: data, as: UTF8.self)
    }

    /// What the delegate answers to a server-trust challenge for `trust`.
    static func disposition(pins: [String], trust: SecTrust) -> URLSession.AuthChallengeDisposition {
        // Called through Apple's signature (the conformance at the end of this file compiles only if they match).
        let delegate: any URLSessionDelegateSignatures = URLSessionTransportDelegate(pins: Set(pins.compactMap(PublicKeyPin.init)))
        let space = URLProtectionSpace.standInServerTrust(host: "gatehouse.example", port: 443, trust: trust)
        let challenge = URLAuthenticationChallenge(protectionSpace: space, proposedCredential: nil, previousFailureCount: 0,
                                                   failureResponse: nil, error: nil, sender: NoSender())
        let answer = Answer()
        delegate.urlSession(URLSession.shared, didReceive: challenge) { disposition, _ in answer.disposition = disposition }
        return answer.disposition
    }

    @Test func pinsAreReadFromCertificatesAsOpenSSLComputesThem() throws {
        for algorithm in [["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"], ["-newkey", "rsa:2048"]] {
            let (der, pin) = try Self.certificate(algorithm)
            #expect(PublicKeyPin(certificate: der)?.description == pin)
        }
        #expect(PublicKeyPin(certificate: Data("not a certificate".utf8)) == nil)
        #expect(PublicKeyPin(certificate: Data([0x30, 0x84, 0xFF, 0xFF, 0xFF, 0xFF])) == nil)
    }

    @Test func aTrustedServerWithAPinnedKeyIsAnsweredAndAnyOtherCancelled() throws {
        let server = try Self.certificate(["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"])
        let other = try Self.certificate(["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"])
        let trusted = SecTrust(chain: [SecCertificate(der: server.der)])
        #expect(Self.disposition(pins: [other.pin, server.pin], trust: trusted) == .useCredential)
        #expect(Self.disposition(pins: [other.pin], trust: trusted) == .cancelAuthenticationChallenge)
        // Pinned but not trusted by the system (expired, wrong host, unknown root): cancelled.
        let untrusted = SecTrust(chain: [SecCertificate(der: server.der)], evaluation: NSError(domain: "NSOSStatusErrorDomain", code: -67_808))
        #expect(Self.disposition(pins: [server.pin], trust: untrusted) == .cancelAuthenticationChallenge)
        // No pins: the system decides as usual.
        #expect(Self.disposition(pins: [], trust: untrusted) == .performDefaultHandling)
    }

    @Test func redirectsAreRefused() {
        let delegate: any URLSessionDelegateSignatures = URLSessionTransportDelegate(pins: [])
        let answer = Answer()
        answer.request = URLRequest(url: URL(string: "https://unchanged.example")!)
        let location = URL(string: "com.sample.app://callback?code=secret")!
        delegate.urlSession(URLSession.shared, task: URLSession.shared.dataTask(with: location),
                            willPerformHTTPRedirection: HTTPURLResponse(url: location, statusCode: 302, httpVersion: nil, headerFields: nil)!,
                            newRequest: URLRequest(url: location)) { request in answer.request = request }
        #expect(answer.request == nil)
    }

    @Test func pinsOnLinuxAreRefusedWithAClearError() {
        #expect(throws: GatehouseClientError.self) { try URLSessionTransport(pins: ["sha256/short"]) }
        #expect(throws: GatehouseClientError.self) { try URLSessionTransport(pins: []) }
        #if !canImport(Security)
        #expect(throws: GatehouseClientError.self) { try URLSessionTransport(pins: ["sha256/" + Data(count: 32).base64EncodedString()]) }
        #endif
    }
}

extension URLSessionTransportDelegate: URLSessionDelegateSignatures {}

private final class Answer: @unchecked Sendable {
    var disposition = URLSession.AuthChallengeDisposition.rejectProtectionSpace
    var request: URLRequest?
}

private final class NoSender: NSObject, URLAuthenticationChallengeSender {
    func use(_ credential: URLCredential, for challenge: URLAuthenticationChallenge) {}
    func continueWithoutCredential(for challenge: URLAuthenticationChallenge) {}
    func cancel(_ challenge: URLAuthenticationChallenge) {}
    func performDefaultHandling(for challenge: URLAuthenticationChallenge) {}
    func rejectProtectionSpaceAndContinue(with challenge: URLAuthenticationChallenge) {}
}
