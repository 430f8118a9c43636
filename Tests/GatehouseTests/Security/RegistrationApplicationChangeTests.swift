import Foundation
import GatehouseProtocol
import Testing

/// Hostile input round 3, finding 8 (issue 54): a per-application device block was escaped by a registration update
/// that changed the application — the registration's check states (a PIN's success) were carried over to an
/// application not blocked on the device. A registration now keeps its application as it keeps its device.
@Suite(.timeLimit(.minutes(3))) struct RegistrationApplicationChangeTests {
    static func update(_ client: ProtocolClient, _ data: RegistrationData) async throws -> TestResponse {
        let clientID = client.clientID ?? ""
        return try await HTTP.send(.PUT, client.api + "/registration/v1/self/\(clientID)", headers: [("Content-Type", "application/json")],
                                   body: try JSONEncoder().encode(RegistrationRequest(signedRegistrationData: JWS.sign(data, with: client.key, kid: clientID))))
    }

    @Test func anUpdateCannotMoveARegistrationOffItsBlockedApplication() async throws {
        try await TestServer.run(policy: Admin.policy) { server in
            var client = try ProtocolClient(server, device: "shared-phone")
            try await client.register()
            #expect(try await client.preauthorize(scope: "accessRestricted", answers: ["PinCodeAttempts": ["pin": "1234"]]).status == 200)
            let writer = try await Admin.writer(server)
            #expect(try await DevicesAdminTests.put(server, "shared-phone", #"{"blockedApplications":["com.sample.pincodeswift"]}"#, token: writer).status == 200)
            #expect(try await client.authorize(scope: "accessRestricted").status == 403)
            // The same registration, now claiming an application the device does not block (and its platform's twin).
            for (app, platform) in [("com.sample.tiny", "ios"), ("com.sample.short", "android"), ("com.sample.pincodeswift", "android")] {
                var moved = client.registrationData()
                moved.application = ApplicationData(id: app, clientPlatform: platform, version: "1.0")
                let update = try await Self.update(client, moved)
                #expect(update.status == 403, "\(app) \(platform): \(String(decoding: update.body, as: UTF8.self))")
            }
            #expect(try await client.authorize(scope: "accessRestricted").status == 403, "still blocked")
            // A new version of the same application is an update.
            var upgraded = client.registrationData()
            upgraded.application = ApplicationData(id: "com.sample.pincodeswift", clientPlatform: "ios", version: "1.1")
            #expect(try await Self.update(client, upgraded).status == 200)
        }
    }
}
