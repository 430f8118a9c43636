import Foundation
import GatehouseChecks
import GatehouseProtocol
import GatehouseServer
import Testing

/// The server accepts what the official MobileFirst web SDK sends (standard-base64 JWS parts with padding,
/// WebCrypto JWKs, no app version, relative `redirect_uri`) and stays strict where it matters.
@Suite(.timeLimit(.minutes(3))) struct WebClientWireTests {
    static let policy = TestPolicies.standard.replacingOccurrences(of: """
          - id: com.sample.web
            platform: web
        """, with: """
          - id: com.sample.web
            platform: web
            scopeElementMapping: { accessRestricted: PinCodeAttempts }
            allowedOrigins: ["http://app.example.test:8443"]
          - id: com.sample.legacy
            platform: android
            minimumClientKeyBits: 512
        """)

    /// Registers like `ibmmfpf.js`; returns the client id (from `Location`).
    static func registerLikeTheWebSDK(_ server: TestServer, key: ClientKeyPair, headers: [(String, String)] = []) async throws -> TestResponse {
        let payload = WebSDKWire.registrationPayload()
        let jws = try WebSDKWire.signJWS(payload, jwk: try WebSDKWire.webCryptoJWK(key), kid: nil) { try key.sign($0) }
        return try await HTTP.send(.POST, server.baseURL + "/mfp/api/registration/v1/self",
                                   headers: [("Content-Type", "application/json"), ("X-Requested-With", "XMLHttpRequest")] + headers,
                                   body: try WebSDKWire.registrationBody(jws, payload: payload))
    }

    @Test func standardBase64PaddedRegistrationIsAcceptedAndTamperingRefused() async throws {
        try await TestServer.run(policy: Self.policy) { server in
            let key = try ClientKeyPair()
            let payload = WebSDKWire.registrationPayload()
            let jws = try WebSDKWire.signJWS(payload, jwk: try WebSDKWire.webCryptoJWK(key), kid: nil) { try key.sign($0) }
            // The SDK's parts really are standard base64 with padding (what broke the strict decoder).
            #expect(jws.header.hasSuffix("=") || jws.payload.hasSuffix("=") || jws.signature.hasSuffix("="))
            #expect((jws.header + jws.payload + jws.signature).contains(where: { $0 == "+" || $0 == "/" }))

            let registered = try await HTTP.send(.POST, server.baseURL + "/mfp/api/registration/v1/self",
                                                 headers: [("Content-Type", "application/json")], body: try WebSDKWire.registrationBody(jws, payload: payload))
            #expect(registered.status == 201)
            #expect(registered.header("Location")?.hasPrefix("/mfp/api/registration/clients/") == true)

            // One bit of the signature flipped, in the same standard-base64 form: refused.
            var signature = Data(base64Encoded: jws.signature)!
            signature[signature.count / 2] ^= 0x01
            let tampered = JWS(header: jws.header, payload: jws.payload, signature: signature.base64EncodedString())
            let refused = try await HTTP.send(.POST, server.baseURL + "/mfp/api/registration/v1/self",
                                              headers: [("Content-Type", "application/json")], body: try WebSDKWire.registrationBody(tampered, payload: payload))
            #expect(refused.status == 400)
            #expect(refused.json?["errorMsg"]?.stringValue?.contains("signature does not verify") == true)

            // The payload changed after signing (another app id), signature kept: refused.
            let changedPayload = WebSDKWire.registrationPayload(app: "com.sample.other")
            let swapped = JWS(header: jws.header, payload: WebSDKWire.btoa(try JSONEncoder().encode(changedPayload)), signature: jws.signature)
            let refusedToo = try await HTTP.send(.POST, server.baseURL + "/mfp/api/registration/v1/self",
                                                 headers: [("Content-Type", "application/json")], body: try WebSDKWire.registrationBody(swapped, payload: changedPayload))
            #expect(refusedToo.status == 400 || refusedToo.status == 403)

            // Signed by another key than the one in the header: refused.
            let other = try ClientKeyPair()
            let foreign = try WebSDKWire.signJWS(payload, jwk: try WebSDKWire.webCryptoJWK(key), kid: nil) { try other.sign($0) }
            let refusedForeign = try await HTTP.send(.POST, server.baseURL + "/mfp/api/registration/v1/self",
                                                     headers: [("Content-Type", "application/json")], body: try WebSDKWire.registrationBody(foreign, payload: payload))
            #expect(refusedForeign.status == 400)
        }
    }

    @Test func wholeWebFlowWithRelativeRedirectAndStandardBase64Assertions() async throws {
        try await TestServer.run(policy: Self.policy) { server in
            let key = try ClientKeyPair()
            let registered = try await Self.registerLikeTheWebSDK(server, key: key)
            #expect(registered.status == 201)
            let clientID = try #require(registered.header("Location")?.split(separator: "/").last.map(String.init))
            let api = server.baseURL + "/mfp/api"

            // The SDK's PUT when the browser's data changed (a new User-Agent): same key, standard base64, no version.
            var changed = WebSDKWire.registrationPayload()
            if case .object(var device)? = changed["device"], case .object(var whole) = changed {
                device["platform"] = "Mozilla/5.0 (X11; Linux x86_64) Chrome/121"
                whole["device"] = .object(device)
                changed = .object(whole)
            }
            let update = try WebSDKWire.signJWS(changed, jwk: try WebSDKWire.webCryptoJWK(key), kid: clientID) { try key.sign($0) }
            let put = try await HTTP.send(.PUT, server.baseURL + "/mfp/api/registration/v1/self/\(clientID)",
                                          headers: [("Content-Type", "application/json; charset=UTF-8")], body: try WebSDKWire.registrationBody(update, payload: changed))
            #expect(put.status == 200)
            #expect(put.header("Location")?.hasSuffix("/\(clientID)") == true)

            // Pre-authorization rounds: PIN challenge, answered.
            let challenged = try await HTTP.postJSON(api + "/preauth/v1/preauthorize",
                                                     JSON.object(["client_id": .string(clientID), "scope": "RegisteredClient accessRestricted"]))
            #expect(challenged.status == 401)
            #expect(challenged.json?["challenges"]?["PinCodeAttempts"]?["remainingAttempts"] == 3)
            let answered = try await HTTP.postJSON(api + "/preauth/v1/preauthorize", JSON.object([
                "client_id": .string(clientID), "scope": "RegisteredClient accessRestricted",
                "challengeResponse": ["PinCodeAttempts": ["pin": "1234"]],
            ]))
            #expect(answered.status == 200)

            // Authorization with the relative redirect_uri the SDK builds from mfpContextRoot '/mfp'.
            let redirectURI = "/mfp/api/az/v1/authorization/redirect/\(clientID)"
            let authorization = try await HTTP.send(.GET, api + "/az/v1/authorization?" + HTTP.formEncode([
                ("response_type", "code"), ("client_id", clientID), ("scope", "RegisteredClient accessRestricted"), ("redirect_uri", redirectURI),
            ]), headers: [("X-Requested-With", "XMLHttpRequest")])
            #expect(authorization.status == 302)
            let location = try #require(authorization.header("Location"))
            #expect(location.hasPrefix(redirectURI + "?code="))
            // The browser follows the redirect; the target answers the code as JSON.
            let target = try await HTTP.send(.GET, server.baseURL + location)
            #expect(target.status == 200)
            let code = try #require(target.json?["code"]?.stringValue)

            // Another client's redirect path, or another host, is refused.
            for bad in ["/mfp/api/az/v1/authorization/redirect/someone-else", "//evil.example/mfp/api/az/v1/authorization/redirect/\(clientID)",
                        "http://evil.example/mfp/api/az/v1/authorization/redirect/\(clientID)"] {
                let refused = try await HTTP.send(.GET, api + "/az/v1/authorization?" + HTTP.formEncode([
                    ("response_type", "code"), ("client_id", clientID), ("scope", "RegisteredClient accessRestricted"), ("redirect_uri", bad),
                ]))
                #expect(refused.status == 400, "\(bad)")
            }

            // Token: the assertion in the SDK's standard-base64 form with `+`, `/` and `=`, aud "az/v1/token", jti = code.
            let assertion = try WebSDKWire.signJWS(WebSDKWire.assertionClaims(clientID: clientID, aud: "az/v1/token", jti: code),
                                                   jwk: try WebSDKWire.webCryptoJWK(key), kid: clientID) { try key.sign($0) }
            let token = try await HTTP.postForm(api + "/az/v1/token", [
                ("client_assertion", assertion.compact), ("code", code), ("grant_type", "authorization_code"),
                ("redirect_uri", redirectURI), ("client_assertion_type", ClientAssertionClaims.assertionType),
            ])
            #expect(token.status == 200, "\(String(decoding: token.body, as: UTF8.self))")
            let accessToken = try #require(token.json?["access_token"]?.stringValue)
            let balance = try await HTTP.send(.GET, api + "/adapters/ResourceAdapter/balance", headers: [("Authorization", "Bearer \(accessToken)")])
            #expect(balance.status == 200)
            #expect(String(decoding: balance.body, as: UTF8.self) == "19938.80")

            // Heartbeat and logout with the SDK's assertions (aud null, jti null).
            let beat = try WebSDKWire.signJWS(WebSDKWire.assertionClaims(clientID: clientID, aud: nil, jti: nil),
                                              jwk: try WebSDKWire.webCryptoJWK(key), kid: clientID) { try key.sign($0) }
            let heartbeat = try await HTTP.postForm(api + "/preauth/v1/heartbeat", [
                ("client_assertion", beat.compact), ("client_assertion_type", ClientAssertionClaims.assertionType),
            ])
            #expect(heartbeat.status == 200)
            // A new assertion: each is accepted once.
            let bye = try WebSDKWire.signJWS(WebSDKWire.assertionClaims(clientID: clientID, aud: nil, jti: nil, offset: 1),
                                             jwk: try WebSDKWire.webCryptoJWK(key), kid: clientID) { try key.sign($0) }
            let logout = try await HTTP.postForm(api + "/preauth/v1/logout", [
                ("client_assertion", bye.compact), ("security_check", "PinCodeAttempts"), ("client_assertion_type", ClientAssertionClaims.assertionType),
            ])
            #expect(logout.status == 200)
            let again = try await HTTP.postJSON(api + "/preauth/v1/preauthorize",
                                                JSON.object(["client_id": .string(clientID), "scope": "RegisteredClient accessRestricted"]))
            #expect(again.status == 401)
        }
    }

    @Test func legacyKeySizesOnlyWhereThePolicyAllowsThem() async throws {
        try await TestServer.run(policy: Self.policy) { server in
            let legacy = RawRSAKey.legacy512
            func register(app: String, platform: String) async throws -> TestResponse {
                let payload: JSON = [
                    "device": ["id": "legacy-device", "platform": "android 4.4", "hardware": "Nexus 5"],
                    "application": ["clientPlatform": .string(platform), "id": .string(app), "version": "1.0"],
                    "attributes": ["sdk_protocol_version": 1],
                ]
                let jws = try WebSDKWire.signJWS(payload, jwk: legacy.jwk, kid: nil) { legacy.sign($0) }
                return try await HTTP.send(.POST, server.baseURL + "/mfp/api/registration/v1/self",
                                           headers: [("Content-Type", "application/json")], body: try WebSDKWire.registrationBody(jws, payload: payload))
            }
            // The default minimum (2048) refuses a 512-bit key...
            let refused = try await register(app: "com.sample.short", platform: "android")
            #expect(refused.status == 400)
            #expect(refused.json?["errorMsg"]?.stringValue?.contains("2048 bits") == true)
            // ...an application whose policy lowered it to 512 accepts it, and verifies its assertions.
            let accepted = try await register(app: "com.sample.legacy", platform: "android")
            #expect(accepted.status == 201)
            let clientID = try #require(accepted.header("Location")?.split(separator: "/").last.map(String.init))
            let claims = WebSDKWire.assertionClaims(clientID: clientID, app: "com.sample.legacy", aud: nil, jti: nil)
            let beat = try WebSDKWire.signJWS(claims, jwk: legacy.jwk, kid: clientID) { legacy.sign($0) }
            let heartbeat = try await HTTP.postForm(server.baseURL + "/mfp/api/preauth/v1/heartbeat", [
                ("client_assertion", beat.compact), ("client_assertion_type", ClientAssertionClaims.assertionType),
            ])
            #expect(heartbeat.status == 200)
            // A legacy signature that does not verify is still refused.
            let forged = try WebSDKWire.signJWS(claims, jwk: legacy.jwk, kid: clientID) { var s = legacy.sign($0); s[3] ^= 0x40; return s }
            let refusedForged = try await HTTP.postForm(server.baseURL + "/mfp/api/preauth/v1/heartbeat", [
                ("client_assertion", forged.compact), ("client_assertion_type", ClientAssertionClaims.assertionType),
            ])
            #expect(refusedForged.status == 401)
        }
    }

    @Test func legacyKeyPolicyIsValidatedAndWarned() throws {
        let services = SecurityCheckServices(users: PolicyTests.NoUsers())
        let warned = try SecurityPolicy.parse(yaml: Self.policy, file: "p.yaml", registry: .builtIn, services: services)
        #expect(warned.warnings.contains { $0.contains("applications[3].minimumClientKeyBits") && $0.contains("512 bits") })
        let tooSmall = Self.policy.replacingOccurrences(of: "minimumClientKeyBits: 512", with: "minimumClientKeyBits: 256")
        #expect(throws: PolicyError.self) { try SecurityPolicy.parse(yaml: tooSmall, file: "p.yaml", registry: .builtIn, services: services) }
        let wildcard = Self.policy.replacingOccurrences(of: "\"http://app.example.test:8443\"", with: "\"*\"")
        #expect(throws: PolicyError.self) { try SecurityPolicy.parse(yaml: wildcard, file: "p.yaml", registry: .builtIn, services: services) }
    }

    @Test func corsForAllowedOriginsOnly() async throws {
        try await TestServer.run(policy: Self.policy) { server in
            let url = server.baseURL + "/mfp/api/registration/v1/self"
            // Preflight from an allowed origin: 204 with the origin (never *), methods and the requested headers.
            let preflight = try await HTTP.send(.OPTIONS, url, headers: [
                ("Origin", "http://app.example.test:8443"), ("Access-Control-Request-Method", "POST"),
                ("Access-Control-Request-Headers", "content-type,x-requested-with,x-wl-app-version"),
            ])
            #expect(preflight.status == 204)
            #expect(preflight.header("Access-Control-Allow-Origin") == "http://app.example.test:8443")
            #expect(preflight.header("Access-Control-Allow-Methods")?.contains("POST") == true)
            #expect(preflight.header("Access-Control-Allow-Headers") == "content-type,x-requested-with,x-wl-app-version")
            // From another origin: no CORS answer.
            let foreignPreflight = try await HTTP.send(.OPTIONS, url, headers: [
                ("Origin", "http://evil.example.test"), ("Access-Control-Request-Method", "POST"),
            ])
            #expect(foreignPreflight.header("Access-Control-Allow-Origin") == nil)

            // The real request from the allowed origin registers and exposes Location and WWW-Authenticate.
            let allowed = try await Self.registerLikeTheWebSDK(server, key: try ClientKeyPair(), headers: [("Origin", "http://app.example.test:8443")])
            #expect(allowed.status == 201)
            #expect(allowed.header("Access-Control-Allow-Origin") == "http://app.example.test:8443")
            #expect(allowed.header("Access-Control-Expose-Headers")?.contains("WWW-Authenticate") == true)
            #expect(allowed.header("Access-Control-Expose-Headers")?.contains("Location") == true)
            // A page of a foreign origin may not register (even if it ignores CORS, as a script outside a browser may).
            let foreign = try await Self.registerLikeTheWebSDK(server, key: try ClientKeyPair(), headers: [("Origin", "http://evil.example.test")])
            #expect(foreign.status == 403)
            #expect(foreign.json?["errorCode"] == "ORIGIN_NOT_ALLOWED")
            #expect(foreign.header("Access-Control-Allow-Origin") == nil)
            // Same origin as the server: always allowed.
            let same = try await Self.registerLikeTheWebSDK(server, key: try ClientKeyPair(), headers: [("Origin", server.baseURL)])
            #expect(same.status == 201)
        }
    }
}
