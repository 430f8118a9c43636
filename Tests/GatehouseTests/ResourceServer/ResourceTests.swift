import Crypto
import Foundation
import GatehouseProtocol
import JWTKit
import Testing

/// Protected resources: the answers of reference §2.5, and a token honoured only while its checks grant it.
@Suite(.timeLimit(.minutes(3))) struct ResourceTests {
    static func balance(_ server: TestServer, token: String? = nil, authorization: String? = nil) async throws -> TestResponse {
        let header = authorization ?? token.map { "Bearer \($0)" }
        return try await HTTP.send(.GET, server.baseURL + "/mfp/api/adapters/ResourceAdapter/balance", headers: header.map { [("Authorization", $0)] } ?? [])
    }

    static func expectBearer(_ response: TestResponse, _ status: Int, _ challenge: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(response.status == status, sourceLocation: sourceLocation)
        #expect(response.header("WWW-Authenticate") == challenge, sourceLocation: sourceLocation)
        #expect(response.json?["error"]?.stringValue != nil, sourceLocation: sourceLocation)
    }

    /// Reference §3.8, step by step.
    @Test func theSeedFlowEndToEnd() async throws {
        try await TestServer.run { server in
            Self.expectBearer(try await Self.balance(server), 401, "Bearer")
            var client = try ProtocolClient(server)
            try await client.register()
            #expect(try await client.preauthorize(scope: "RegisteredClient").status == 200)
            let registered = try await client.obtainToken(scope: "RegisteredClient")
            #expect(registered.scope == "RegisteredClient")
            Self.expectBearer(try await Self.balance(server, token: registered.access_token), 403,
                              "Bearer error=\"insufficient_scope\", scope=\"RegisteredClient accessRestricted\"")
            let challenge = try await client.preauthorize(scope: "RegisteredClient accessRestricted")
            #expect(challenge.json?["challenges"]?["PinCodeAttempts"] == ["errorMsg": nil, "remainingAttempts": 3])
            #expect(try await client.preauthorize(scope: "RegisteredClient accessRestricted", answers: ["PinCodeAttempts": ["pin": "1234"]]).status == 200)
            let token = try await client.obtainToken(scope: "RegisteredClient accessRestricted")
            let balance = try await Self.balance(server, token: token.access_token)
            #expect(balance.status == 200)
            #expect(String(decoding: balance.body, as: UTF8.self) == "19938.80")
            let open = try await HTTP.send(.GET, server.baseURL + "/mfp/api/adapters/ResourceAdapter/unprotected")
            #expect(open.status == 200)
        }
    }

    @Test func everyRowOfTheResourceAnswerTable() async throws {
        try await TestServer.run { server in
            let client = try await TokenTests.pinClient(server)
            let good = try await client.obtainToken(scope: "accessRestricted").access_token
            #expect(try await Self.balance(server, token: good).status == 200)
            #expect(try await Self.balance(server, authorization: "BEARER  \(good)").status == 200)  // the scheme is case-insensitive

            for header in ["Basic dTpw", "Bearer", "Bearer ", "Bearer a b", "bearer", "Bearertoken", "Bearer\ta\tb"] {
                Self.expectBearer(try await Self.balance(server, authorization: header), 401, "Bearer")
            }
            let invalid = "Bearer error=\"invalid_token\""
            Self.expectBearer(try await Self.balance(server, token: "not.a.token"), 401, invalid)
            Self.expectBearer(try await Self.balance(server, token: String(good.dropLast(3)) + "AAA"), 401, invalid)

            // A token signed by a foreign key under the server's kid.
            let parts = good.split(separator: ".").map(String.init)
            let header = try JSONDecoder().decode(JSON.self, from: Base64URL.decode(parts[0])!)
            let kid = try #require(header["kid"]?.stringValue)
            let payload = Base64URL.decode(parts[1])!
            let foreign = JWTKeyCollection()
            await foreign.add(ecdsa: ES256PrivateKey(), kid: JWKIdentifier(string: kid))
            let claims = try JSONDecoder().decode(JSON.self, from: payload)
            let forged = try await foreign.sign(RawClaims(json: claims), kid: JWKIdentifier(string: kid))
            Self.expectBearer(try await Self.balance(server, token: forged), 401, invalid)

            // alg none, and a symmetric alg keyed with public material.
            let none = Base64URL.encode(Data(#"{"alg":"none","typ":"JWT","kid":"\#(kid)"}"#.utf8)) + "." + parts[1] + "."
            Self.expectBearer(try await Self.balance(server, token: none), 401, invalid)
            let hsHeader = Base64URL.encode(Data(#"{"alg":"HS256","typ":"JWT","kid":"\#(kid)"}"#.utf8))
            let mac = HMAC<SHA256>.authenticationCode(for: Data("\(hsHeader).\(parts[1])".utf8), using: SymmetricKey(data: Data(kid.utf8)))
            Self.expectBearer(try await Self.balance(server, token: "\(hsHeader).\(parts[1]).\(Base64URL.encode(Data(mac)))"), 401, invalid)

            // An expired token (the application caps tokens at 2 s).
            let tiny = try await TokenTests.pinClient(server, app: "com.sample.tiny", platform: "ios")
            let short = try await tiny.obtainToken(scope: "accessRestricted")
            #expect(short.expires_in <= 2)
            try await Task.sleep(for: .milliseconds(2100))
            Self.expectBearer(try await Self.balance(server, token: short.access_token), 401, invalid)

            // Insufficient scope names the required scope.
            let registered = try await client.obtainToken(scope: nil).access_token
            Self.expectBearer(try await Self.balance(server, token: registered), 403,
                              "Bearer error=\"insufficient_scope\", scope=\"RegisteredClient accessRestricted\"")

            // After logout from its check, the earlier token is refused; a new success gives a working token.
            #expect(try await client.logout(securityCheck: "PinCodeAttempts").status == 200)
            Self.expectBearer(try await Self.balance(server, token: good), 401, invalid)
            _ = try await client.preauthorize(scope: "accessRestricted")
            _ = try await client.preauthorize(scope: "accessRestricted", answers: ["PinCodeAttempts": ["pin": "1234"]])
            let renewed = try await client.obtainToken(scope: "accessRestricted").access_token
            #expect(try await Self.balance(server, token: renewed).status == 200)
        }
    }

    @Test func aBlockInvalidatesEarlierTokens() async throws {
        try await TestServer.run { server in
            let client = try await TokenTests.pinClient(server)
            let token = try await client.obtainToken(scope: "accessRestricted").access_token
            #expect(try await Self.balance(server, token: token).status == 200)
            // The success holds until the client answers wrong: attempting again, then blocked.
            for _ in 0..<3 { _ = try await client.preauthorize(scope: "accessRestricted", answers: ["PinCodeAttempts": ["pin": "0"]]) }
            Self.expectBearer(try await Self.balance(server, token: token), 401, "Bearer error=\"invalid_token\"")
        }
    }

    @Test func clientCredentialsIntrospectionAndRevocation() async throws {
        try await TestServer.run { server in
            let api = server.baseURL + "/mfp/api"
            func basic(_ id: String, _ secret: String) -> (String, String) {
                ("Authorization", "Basic " + Data("\(id):\(secret)".utf8).base64EncodedString())
            }
            let wrongSecret = try await HTTP.postForm(api + "/az/v1/token", [("grant_type", "client_credentials"), ("scope", "authorization.introspect")],
                                                      headers: [basic("balance-service", "nope")])
            #expect(wrongSecret.status == 401)
            #expect(wrongSecret.json?["error"] == "invalid_client")
            let outside = try await HTTP.postForm(api + "/az/v1/token", [("grant_type", "client_credentials"), ("scope", "accessRestricted")],
                                                  headers: [basic("balance-service", "s3cret")])
            #expect(outside.status == 400)
            #expect(outside.json?["error"] == "invalid_scope")
            let wildcard = try await HTTP.postForm(api + "/az/v1/token", [("grant_type", "client_credentials"), ("scope", "reports.daily accessRestricted")],
                                                   headers: [basic("reporter", "other")])
            #expect(wildcard.status == 200)
            let introspector = try await HTTP.postForm(api + "/az/v1/token", [("grant_type", "client_credentials"), ("scope", "authorization.introspect")],
                                                       headers: [basic("balance-service", "s3cret")])
            #expect(introspector.status == 200)
            let filterToken = try introspector.decode(TokenResponse.self)
            #expect(filterToken.expires_in == 3600)

            let client = try await TokenTests.pinClient(server)
            let token = try await client.obtainToken(scope: "accessRestricted")
            let reporterToken = try wildcard.decode(TokenResponse.self).access_token
            let refused = try await HTTP.postForm(api + "/az/v1/introspection", [("token", token.access_token)], headers: [("Authorization", "Bearer \(reporterToken)")])
            #expect(refused.status == 403)
            let refusedBasic = try await HTTP.postForm(api + "/az/v1/introspection", [("token", token.access_token)], headers: [basic("reporter", "other")])
            #expect(refusedBasic.status == 403)

            let answer = try await HTTP.postForm(api + "/az/v1/introspection", [("token", token.access_token)],
                                                 headers: [("Authorization", "Bearer \(filterToken.access_token)")])
            #expect(answer.status == 200)
            let json = try #require(answer.json)
            #expect(json["active"] == true)
            #expect(json["scope"] == "RegisteredClient accessRestricted")
            #expect(json["client_id"]?.stringValue == client.clientID)
            #expect((json["exp"]?.intValue ?? 0) > Int(Date().timeIntervalSince1970 * 1000))
            #expect(json["mfp-application"] == ["id": "com.sample.pincodeswift", "clientPlatform": "ios", "version": "1.0"])
            #expect(json["mfp-device"]?["id"] == "device-com.sample.pincodeswift")
            #expect(json["mfp-checks"]?["PinCodeAttempts"] != nil)
            let viaBasic = try await HTTP.postForm(api + "/az/v1/introspection", [("token", token.access_token)], headers: [basic("balance-service", "s3cret")])
            #expect(viaBasic.json?["active"] == true)
            let garbage = try await HTTP.postForm(api + "/az/v1/introspection", [("token", "garbage")], headers: [basic("balance-service", "s3cret")])
            #expect(garbage.json == ["active": false])

            // RFC 7009: the client revokes its token; resources and introspection refuse it.
            let revoke = try await HTTP.postForm(api + "/az/v1/revoke", [
                ("token", token.access_token), ("client_assertion_type", ClientAssertionClaims.assertionType),
                ("client_assertion", try client.assertion(jti: nil, aud: nil)),
            ])
            #expect(revoke.status == 200)
            Self.expectBearer(try await Self.balance(server, token: token.access_token), 401, "Bearer error=\"invalid_token\"")
            let after = try await HTTP.postForm(api + "/az/v1/introspection", [("token", token.access_token)], headers: [basic("balance-service", "s3cret")])
            #expect(after.json == ["active": false])
        }
    }

    @Test func jwksAndMetadataDescribeTheServer() async throws {
        try await TestServer.run { server in
            let client = try await TokenTests.pinClient(server)
            let token = try await client.obtainToken(scope: "accessRestricted").access_token
            let jwks = try await HTTP.send(.GET, server.baseURL + "/.well-known/jwks.json")
            #expect(jwks.status == 200)
            let keys = JWTKeyCollection()
            try await keys.add(jwks: try JSONDecoder().decode(JWKS.self, from: jwks.body))
            let verified = try await keys.verify(token, as: RawClaims.self)
            #expect(verified.json["scope"] == "RegisteredClient accessRestricted")
            let metadata = try await HTTP.send(.GET, server.baseURL + "/.well-known/oauth-authorization-server")
            #expect(metadata.json?["token_endpoint"]?.stringValue == "\(server.baseURL)/mfp/api/az/v1/token")
            #expect(metadata.json?["jwks_uri"]?.stringValue == "\(server.baseURL)/.well-known/jwks.json")
            #expect(metadata.json?["revocation_endpoint"] != nil)
        }
    }
}

/// Claims as plain JSON, for forging and reading tokens in tests.
struct RawClaims: JWTPayload {
    var json: JSON
    init(json: JSON) { self.json = json }
    init(from decoder: any Decoder) throws { json = try JSON(from: decoder) }
    func encode(to encoder: any Encoder) throws { try json.encode(to: encoder) }
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
