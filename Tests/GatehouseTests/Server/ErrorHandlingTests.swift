import Foundation
import GatehouseProtocol
import Testing

/// Bad input gets a 4xx JSON answer and the server keeps serving.
@Suite(.timeLimit(.minutes(3))) struct ErrorHandlingTests {
    static func expectJSONError(_ response: TestResponse, _ status: Int, _ code: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == status, sourceLocation: sourceLocation)
        #expect(response.header("Content-Type")?.hasPrefix("application/json") == true, sourceLocation: sourceLocation)
        let json = response.json
        #expect(json?["errorCode"]?.stringValue != nil || json?["error"]?.stringValue != nil, sourceLocation: sourceLocation)
        if let code { #expect(json?["errorCode"]?.stringValue == code || json?["error"]?.stringValue == code, sourceLocation: sourceLocation) }
    }

    @Test func badInputGetsClearErrors() async throws {
        try await TestServer.run { server in
            let api = server.baseURL + "/mfp/api"
            let json = [("Content-Type", "application/json")]
            var client = try ProtocolClient(server)
            try await client.register()
            let id = client.clientID!

            Self.expectJSONError(try await HTTP.send(.POST, api + "/preauth/v1/preauthorize", headers: json, body: Data("{\"client_id\":".utf8)), 400, "INVALID_REQUEST")
            Self.expectJSONError(try await HTTP.send(.POST, api + "/preauth/v1/preauthorize", headers: json, body: Data("[1,2]".utf8)), 400, "INVALID_REQUEST")
            Self.expectJSONError(try await HTTP.send(.POST, api + "/preauth/v1/preauthorize", headers: json, body: Data("{\"client_id\":5}".utf8)), 400, "INVALID_REQUEST")
            Self.expectJSONError(try await HTTP.postJSON(api + "/preauth/v1/preauthorize", PreauthorizeRequest(clientID: "unknown", scope: nil)), 400, "INVALID_CLIENT_ID")
            Self.expectJSONError(try await client.preauthorize(scope: "NoSuchCheck"), 400, "INVALID_SCOPE")
            Self.expectJSONError(try await client.preauthorize(scope: "accessRestricted", answers: ["PinCodeAttempts": "1234"]), 400, "INVALID_REQUEST")
            Self.expectJSONError(try await client.logout(securityCheck: "NoSuchCheck"), 400, "INVALID_SECURITY_CHECK")
            Self.expectJSONError(
                try await HTTP.send(.POST, api + "/preauth/v1/preauthorize", headers: [("Content-Type", "text/plain")], body: Data("{\"client_id\":\"\(id)\"}".utf8)),
                415, "UNSUPPORTED_MEDIA_TYPE")
            Self.expectJSONError(try await HTTP.postJSON(api + "/az/v1/token", ["grant_type": "authorization_code"]), 415)
            Self.expectJSONError(try await HTTP.postForm(api + "/az/v1/token", [("grant_type", "password")]), 400, "unsupported_grant_type")
            Self.expectJSONError(try await HTTP.postForm(api + "/az/v1/token", [("grant_type", "authorization_code")]), 400, "invalid_request")
            let big = Data(repeating: UInt8(ascii: "a"), count: 200_000)
            Self.expectJSONError(try await HTTP.send(.POST, api + "/preauth/v1/preauthorize", headers: json, body: big), 413, "REQUEST_TOO_LARGE")
            Self.expectJSONError(try await HTTP.send(.POST, api + "/registration/v1/self", headers: json, body: Data("{}".utf8)), 400, "INVALID_REQUEST")
            let badJWS = RegistrationRequest(signedRegistrationData: JWS(header: "x", payload: "y", signature: "z"))
            Self.expectJSONError(try await HTTP.postJSON(api + "/registration/v1/self", badJWS), 400, "INVALID_REQUEST")
            Self.expectJSONError(try await HTTP.send(.GET, api + "/az/v1/authorization?response_type=token"), 400, "unsupported_response_type")
            Self.expectJSONError(try await HTTP.send(.GET, api + "/az/v1/authorization?response_type=code&client_id=nobody"), 400, "INVALID_CLIENT_ID")
            Self.expectJSONError(try await HTTP.send(.GET, server.baseURL + "/nowhere"), 404)

            // Still serving, and the client's state is intact.
            #expect(try await HTTP.send(.GET, server.baseURL + "/health").status == 200)
            #expect(try await client.preauthorize(scope: "accessRestricted").json?["challenges"]?["PinCodeAttempts"]?["remainingAttempts"] == 3)
        }
    }

    @Test func registrationsAreVerified() async throws {
        try await TestServer.run { server in
            // An application the policy does not know.
            let unknown = try ProtocolClient(server, app: "com.unknown.app")
            Self.expectJSONError(try await unknown.registerRequest(), 403, "APPLICATION_NOT_REGISTERED")
            // Registration data signed with a key other than the one in the header.
            let client = try ProtocolClient(server)
            var jws = try JWS.sign(client.registrationData(), with: client.key, kid: nil)
            jws.signature = try JWS.sign(client.registrationData(), with: try ClientKeyPair(), kid: nil).signature
            Self.expectJSONError(try await HTTP.postJSON(client.api + "/registration/v1/self", RegistrationRequest(signedRegistrationData: jws)), 400, "INVALID_REQUEST")
        }
    }
}
