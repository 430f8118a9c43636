import Foundation
import GatehouseProtocol
import Testing

/// Registration updates (PUT) and reads (GET), signed with the registered key.
@Suite(.timeLimit(.minutes(3))) struct RegistrationTests {
    @Test func updateAndReadARegistration() async throws {
        try await TestServer.run { server in
            var client = try ProtocolClient(server)
            try await client.register()
            let id = try #require(client.clientID)
            var data = client.registrationData()
            data.application.version = "2.0"
            data.device.deviceDisplayName = "Anna's phone"
            let update = try await HTTP.send(.PUT, client.api + "/registration/v1/self/\(id)", headers: [("Content-Type", "application/json")],
                                             body: try JSONEncoder().encode(RegistrationRequest(signedRegistrationData: try JWS.sign(data, with: client.key, kid: id))))
            #expect(update.status == 200)
            // The web SDK stores the new data only when the answer names the client in Location.
            #expect(update.header("Location") == "/mfp/api/registration/clients/\(id)")
            // A fresh assertion per request: each is accepted once.
            var iat = Int64(Date().timeIntervalSince1970 * 1000)
            func query() throws -> String {
                iat += 1
                return HTTP.formEncode([("client_assertion", try client.assertion(jti: nil, aud: nil, iat: iat)), ("client_assertion_type", ClientAssertionClaims.assertionType)])
            }
            let read = try await HTTP.send(.GET, client.api + "/registration/v1/self/\(id)?" + query())
            #expect(read.status == 200)
            #expect(read.json?["registration"]?["application"]?["version"] == "2.0")
            #expect(read.json?["registration"]?["device"]?["deviceDisplayName"] == "Anna's phone")

            // Signed by another key: refused, nothing changed.
            data.application.version = "3.0"
            let forged = try await HTTP.send(.PUT, client.api + "/registration/v1/self/\(id)", headers: [("Content-Type", "application/json")],
                                             body: try JSONEncoder().encode(RegistrationRequest(signedRegistrationData: try JWS.sign(data, with: try ClientKeyPair(), kid: id))))
            #expect(forged.status == 400)
            let again = try await HTTP.send(.GET, client.api + "/registration/v1/self/\(id)?" + query())
            #expect(again.json?["registration"]?["application"]?["version"] == "2.0")
            // An unknown client id.
            let unknown = try await HTTP.send(.PUT, client.api + "/registration/v1/self/nobody", headers: [("Content-Type", "application/json")],
                                              body: try JSONEncoder().encode(RegistrationRequest(signedRegistrationData: try JWS.sign(data, with: client.key, kid: id))))
            #expect(unknown.json?["errorCode"] == "INVALID_CLIENT_ID")
        }
    }
}
