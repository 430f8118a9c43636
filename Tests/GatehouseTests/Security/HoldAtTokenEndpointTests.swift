import Foundation
import GatehouseProtocol
import Testing

/// Hostile input round 3, finding 3 (issue 54): a device hold was sidestepped by an authorization code obtained just
/// before it — after the device was set `STOLEN`, the earlier code was exchanged for a new token (`200`) that opened
/// the balance; only introspection said inactive. Remote disable took the same path. The token endpoint now reads
/// the hold and the version's status when it exchanges a code.
@Suite(.timeLimit(.minutes(3))) struct HoldAtTokenEndpointTests {
    static let pin: [String: JSON] = ["PinCodeAttempts": ["pin": "1234"]]

    /// A registered client of `version` whose PIN check succeeded, and a code for `accessRestricted`.
    static func codeBeforeTheHold(_ server: TestServer, device: String, version: String = "1.0") async throws -> (ProtocolClient, String) {
        var client = try ProtocolClient(server, version: version, device: device)
        try await client.register()
        #expect(try await client.preauthorize(scope: "accessRestricted", answers: pin).status == 200)
        let authorization = try await client.authorize(scope: "accessRestricted")
        let code = try #require(ProtocolClient.code(from: authorization), "authorization answered \(authorization.status)")
        return (client, code)
    }

    @Test func aCodeObtainedBeforeADeviceHoldIsNotExchangedAfterIt() async throws {
        try await TestServer.run(policy: Admin.policy) { server in
            let writer = try await Admin.writer(server)
            for status in ["STOLEN", "LOST", "DISABLED"] {
                let (client, code) = try await Self.codeBeforeTheHold(server, device: "phone-\(status.lowercased())")
                #expect(try await DevicesAdminTests.put(server, client.device, #"{"status":"\#(status)"}"#, token: writer).status == 200)
                let refused = try await client.token(code: code)
                #expect(refused.status == 403, "\(status): \(String(decoding: refused.body, as: UTF8.self))")
                #expect(refused.json?["error"] == "access_denied")
                #expect(refused.json?["error_description"]?.stringValue?.contains(status.lowercased()) == true, "\(String(describing: refused.json))")
                // The code is used up: lifting the hold does not make it good again.
                #expect(try await DevicesAdminTests.put(server, client.device, #"{"status":"ACTIVE"}"#, token: writer).status == 200)
                #expect(try await client.token(code: code).status == 400)
            }
            // Unheld, the same steps give a token (the test's path works).
            let (client, code) = try await Self.codeBeforeTheHold(server, device: "phone-kept")
            #expect(try await client.token(code: code).status == 200)
        }
    }

    @Test func aCodeObtainedBeforeItsVersionWasDisabledIsNotExchangedAfterIt() async throws {
        let app = "scopeElementMapping: { accessRestricted: PinCodeAttempts, both: \"SimpleCaptcha PinCodeAttempts\", open: \"\" }"
        try #require(Admin.policy.contains(app))
        let disabling = Admin.policy.replacingOccurrences(of: app, with: app + """

                versions: [{ versions: "2.0", status: disabled, message: "Version 2.0 is withdrawn." }]
            """)
        try await TestServer.run(policy: Admin.policy) { server in
            let writer = try await Admin.writer(server)
            let (withdrawn, code) = try await Self.codeBeforeTheHold(server, device: "phone-2", version: "2.0")
            let (kept, keptCode) = try await Self.codeBeforeTheHold(server, device: "phone-1", version: "1.0")
            #expect(try await PolicyApplyTests.apply(server, disabling, token: writer).status == 200)
            let refused = try await withdrawn.token(code: code)
            #expect(refused.status == 403, "\(String(decoding: refused.body, as: UTF8.self))")
            #expect(try await kept.token(code: keptCode).status == 200)
        }
    }
}
