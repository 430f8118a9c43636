import Foundation
@testable import GatehouseMobileFirst
import GatehouseProtocol
import Testing

/// `WLClient.pinTrustedCertificatePublicKey(fromFile:)` and the server named by `mfpclient.plist`, as MobileFirst apps
/// use them (issue 51): the pin is read from a certificate file (DER, as MobileFirst takes it, or PEM) and must equal
/// openssl's pin of it; a file that is missing or not a certificate makes every request fail, and on Linux, where
/// URLSession cannot pin, so does a good one — nothing is sent without the pin the app asked for. Each test makes its
/// own `WLClient` (the app's is `sharedInstance()`).
@Suite(.timeLimit(.minutes(2))) struct MobileFirstPinningTests {
    static let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../../../shared/clients/mobilefirst-swift-samples").standardizedFileURL

    @Test func thePinIsTheCertificatesKeyAsOpenSSLComputesIt() async throws {
        let certificates = try await TestCertificates.make(commonName: "gatehouse.example")
        defer { try? FileManager.default.removeItem(atPath: certificates.directory) }
        let expected = try await SDKPinningTests.opensslPin(of: certificates.certificatePath)
        let der = certificates.directory + "/server.cer"
        let converted = try await runOffThePool("/usr/bin/openssl", ["x509", "-in", certificates.certificatePath, "-outform", "der", "-out", der])
        #expect(converted.status == 0)
        for file in [der, certificates.certificatePath] {   // DER (MobileFirst's .cer) and PEM
            #expect(try WLClient.certificatePin(named: file, in: .main).get().description == expected)
        }
    }

    @Test func aMissingOrUnreadableCertificateFailsEveryRequest() throws {
        let missing = WLClient.certificatePin(named: "no-such-certificate.cer", in: .main)
        #expect(throws: WLError.self) { try missing.get() }
        let notACertificate = FileManager.default.temporaryDirectory.appendingPathComponent("not-a-cert-\(UUID().uuidString).cer")
        try Data("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n".utf8).write(to: notACertificate)
        defer { try? FileManager.default.removeItem(at: notACertificate) }
        #expect(throws: WLError.self) { try WLClient.certificatePin(named: notACertificate.path, in: .main).get() }

        let client = WLClient()
        client.setServerUrl(URL(string: "https://gatehouse.example/mfp"))
        client.setApplication(id: "com.sample.pincodeswift", platform: "ios", version: "1.0")
        client.pinTrustedCertificatePublicKey(fromFile: "no-such-certificate.cer")
        #expect(throws: WLError.self) { try client.client() }
    }

    @Test func onLinuxAGoodPinStillSendsNothing() async throws {
        let certificates = try await TestCertificates.make(commonName: "gatehouse.example")
        defer { try? FileManager.default.removeItem(atPath: certificates.directory) }
        let client = WLClient()
        client.setServerUrl(URL(string: "https://gatehouse.example/mfp"))
        client.setApplication(id: "com.sample.pincodeswift", platform: "ios", version: "1.0")
        #expect(throws: Never.self) { try client.client() }   // unpinned: a client
        client.pinTrustedCertificatePublicKey(fromFile: certificates.certificatePath)
        #if !canImport(Security)
        do {
            _ = try client.client()
            Issue.record("a pinned client was made where URLSession cannot pin")
        } catch {
            #expect(error.message.contains("PinnedHTTPTransport"))
        }
        #endif
    }

    @Test func theServerComesFromTheSamplesMfpclientPlist() throws {
        // The Developer Center's PinCodeSwift ships mfpclient.plist with the host left for the developer to fill in:
        // no server, rather than a URL without a host.
        let shipped = try #require(Bundle(path: Self.samples.appendingPathComponent("PinCodeSwift").path))
        #expect(WLClient.plistServer(in: shipped) == nil)
        // The same file with its host filled in, as a developer does.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bundle-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let plist = try String(contentsOf: Self.samples.appendingPathComponent("PinCodeSwift/mfpclient.plist"), encoding: .utf8)
            .replacingOccurrences(of: "<string></string>", with: "<string>mfp.example.com</string>")
        try plist.write(to: directory.appendingPathComponent("mfpclient.plist"), atomically: true, encoding: .utf8)
        let filled = try #require(Bundle(path: directory.path))
        #expect(WLClient.plistServer(in: filled)?.absoluteString == "http://mfp.example.com:9080/mfp")
    }
}
