import Foundation
import GatehouseClient
import GatehouseProtocol
import Testing

/// Registration on first use, the key store, re-registration, `INVALID_CLIENT_ID` and clock synchronisation.
@Suite(.timeLimit(.minutes(3))) struct SDKRegistrationTests {
    @Test func registersOnFirstUseAndKeepsTheRegistrationInTheKeyStore() async throws {
        try await TestServer.run { server in
            let directory = URL(fileURLWithPath: TestServer.temporaryDirectory())
            let store = FileKeyStore(directory: directory)
            let transport = RecordingTransport()
            let client = SDK.client(server, keyStore: store, transport: transport)
            #expect(try await client.clientID == nil)
            _ = try await client.obtainAccessToken()
            let clientID = try #require(try await client.clientID)

            let registration = try #require(transport.requests(to: "/registration/v1/self", method: "POST").first)
            let signed = try #require(registration.bodyJSON?["signedRegistrationData"])
            let jws = JWS(header: signed["header"]!.stringValue!, payload: signed["payload"]!.stringValue!, signature: signed["signature"]!.stringValue!)
            let header = try jws.decodedHeader()
            #expect(header.alg == "RS256")
            #expect(header.jwk?.kid == nil, "no kid before there is a client id")
            let n = try #require(header.jwk.flatMap { Base64URL.decode($0.n) })
            #expect(n.drop(while: { $0 == 0 }).count >= 256, "an RSA key of 2048 bits or more")
            let data = try jws.decodedPayload(as: RegistrationData.self)
            #expect(data.application == ApplicationData(id: SDK.pinApp, clientPlatform: "ios", version: "1.0"))

            let stored = try #require(try await store.load())
            #expect(stored.clientID == clientID)
            #expect(stored.privateKeyPEM?.contains("PRIVATE KEY") == true)
            #expect(stored.registrationData == data)
            let attributes = try FileManager.default.attributesOfItem(atPath: store.fileURL.path)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)

            // A second client on the same store (the app restarted) uses the registration: no new one.
            let restartedTransport = RecordingTransport()
            let restarted = SDK.client(server, keyStore: store, transport: restartedTransport)
            _ = try await restarted.obtainAccessToken()
            #expect(try await restarted.clientID == clientID)
            #expect(restartedTransport.requests(to: "/registration/v1/self").isEmpty)
        }
    }

    @Test func aNewAppVersionUpdatesTheRegistrationWithTheSameKey() async throws {
        try await TestServer.run { server in
            let store = InMemoryKeyStore()
            let first = SDK.client(server, keyStore: store)
            let clientID = try await first.register()
            let key = store.current?.privateKeyPEM

            let transport = RecordingTransport()
            let upgraded = SDK.client(server, version: "2.0", keyStore: store, transport: transport)
            _ = try await upgraded.obtainAccessToken()
            #expect(try await upgraded.clientID == clientID, "an update keeps the client id")
            #expect(transport.requests(to: "/registration/v1/self", method: "POST").isEmpty)
            let update = try #require(transport.requests(to: "/registration/v1/self/\(clientID)", method: "PUT").first)
            let payload = try #require(update.bodyJSON?["signedRegistrationData"]?["payload"]?.stringValue.flatMap { Base64URL.decode($0) })
            #expect(try JSONDecoder().decode(RegistrationData.self, from: payload).application.version == "2.0")
            #expect(store.current?.privateKeyPEM == key)
            #expect(store.current?.registrationData?.application.version == "2.0")

            // Unchanged data: no registration traffic at all.
            transport.reset()
            let again = SDK.client(server, version: "2.0", keyStore: store, transport: transport)
            #expect(try await again.register() == clientID)
            #expect(transport.count == 0)
        }
    }

    /// Invariant 12: the server forgot the client ⇒ one re-registration and one retry.
    @Test func invalidClientIDLeadsToOneReRegistrationAndRetry() async throws {
        try await TestServer.run { server in
            // A registration the server never heard of: a real key, a made-up client id.
            let store = InMemoryKeyStore()
            let stranger = SDK.client(server, keyStore: store)
            _ = try await stranger.register()
            var forged = try #require(store.current)
            forged.clientID = "00000000-0000-0000-0000-000000000000"
            try await store.save(forged)

            let transport = RecordingTransport()
            let client = SDK.client(server, keyStore: store, transport: transport)
            let calls = Calls<JSONObject>()
            try client.registerChallengeHandler(SDK.pinHandler(calls))
            let token = try await client.obtainAccessToken(forScope: "accessRestricted")
            #expect(token.scope == "RegisteredClient accessRestricted")
            let newID = try #require(try await client.clientID)
            #expect(newID != forged.clientID)
            #expect(store.current?.privateKeyPEM != forged.privateKeyPEM, "the wiped key pair is replaced")
            #expect(transport.requests(to: "/registration/v1/self", method: "POST").count == 1)
            let preauthorizations = transport.requests(to: "/preauth/v1/preauthorize")
            #expect(preauthorizations.first?.bodyJSON?["client_id"]?.stringValue == forged.clientID)
            #expect(preauthorizations.dropFirst().allSatisfy { $0.bodyJSON?["client_id"]?.stringValue == newID })
            #expect(calls.count == 1)
        }
    }

    /// Invariant 12, the other half: a server that keeps saying `INVALID_CLIENT_ID` gets one retry, not a loop.
    @Test func invalidClientIDIsRetriedOnceNotInALoop() async throws {
        try await TestServer.run { server in
            let transport = RecordingTransport(intercept: { request in
                guard request.url.path.hasSuffix("/preauth/v1/preauthorize") else { return nil }
                return TransportResponse(status: 400, headers: ["Content-Type": "application/json"],
                                         body: Data(#"{"errorCode":"INVALID_CLIENT_ID","errorMsg":"Unknown client"}"#.utf8))
            })
            let client = SDK.client(server, transport: transport)
            let error = await SDK.error { _ = try await client.obtainAccessToken(forScope: "accessRestricted") }
            #expect(error?.isInvalidClientID == true)
            #expect(transport.requests(to: "/preauth/v1/preauthorize").count == 2)
            #expect(transport.requests(to: "/registration/v1/self", method: "POST").count == 2)
        }
    }

    @Test func anUnknownApplicationIsARegistrationError() async throws {
        try await TestServer.run { server in
            let client = SDK.client(server, app: "com.example.unknown")
            let error = await SDK.error { _ = try await client.obtainAccessToken() }
            guard let error, error.code == .registrationFailed, error.status == 403, error.serverErrorCode == "APPLICATION_NOT_REGISTERED" else {
                Issue.record("expected a registration failure, got \(String(describing: error))")
                return
            }
        }
    }

    /// The client assertion (reference §3.3) is dated by the server's clock learnt from `clockSynchronization`.
    @Test func clientAssertionsFollowTheServerClock() async throws {
        try await TestServer.run { server in
            let skew: Int64 = 5_000
            // The server's clock, as the client sees it, runs 5 s ahead (within the server's tolerance).
            let transport = RecordingTransport(rewrite: { request, response in
                guard request.url.path.hasSuffix("/preauth/v1/preauthorize"), var json = try? JSONDecoder().decode(JSON.self, from: response.body),
                    case .object(var object) = json, case .object(var successes)? = object["successes"],
                    let stamp = successes["clockSynchronization"]?["serverTimeStamp"]?.intValue
                else { return response }
                successes["clockSynchronization"] = ["serverTimeStamp": .int(Int64(stamp) + skew)]
                object["successes"] = .object(successes)
                json = .object(object)
                return TransportResponse(status: response.status, headers: response.headers, body: try! JSONEncoder().encode(json))
            })
            let client = SDK.client(server, transport: transport)
            let before = Int64(Date().timeIntervalSince1970 * 1000)
            _ = try await client.obtainAccessToken()
            let after = Int64(Date().timeIntervalSince1970 * 1000)
            let clientID = try #require(try await client.clientID)
            #expect(abs(client.serverTimeOffsetMillis - skew) < 1_000)

            let tokenRequest = try #require(transport.requests(to: "/az/v1/token").first)
            let form = tokenRequest.bodyForm
            #expect(form["grant_type"] == "authorization_code")
            #expect(form["redirect_uri"] == "https://mfpredirecturi")
            #expect(form["client_assertion_type"] == ClientAssertionClaims.assertionType)
            let assertion = try #require(form["client_assertion"])
            let claims = try #require(SDK.payload(ofJWS: assertion))
            let iat = try #require(claims["iat"]?.intValue)
            #expect(iat >= Int(before + skew - 1_000) && iat <= Int(after + skew + 1_000))
            #expect(claims["exp"]?.intValue == iat + 60_000)
            #expect(claims["aud"]?.stringValue == server.baseURL + "/mfp/api/az/v1/token")
            #expect(claims["iss"]?.stringValue == "\(SDK.pinApp)$ios$1.0")
            #expect(claims["sub"]?.stringValue == clientID)
            #expect(claims["jti"]?.stringValue == form["code"])
            #expect(SDK.header(ofJWS: assertion)?["jwk"]?["kid"]?.stringValue == clientID)

            // The authorization answer is a redirect the SDK reads without following it.
            let authorization = try #require(transport.requests(to: "/az/v1/authorization").first)
            #expect(authorization.url.query?.contains("redirect_uri=https%3A%2F%2Fmfpredirecturi") == true)
            #expect(transport.requests.allSatisfy { $0.url.host != "mfpredirecturi" })
        }
    }
}
