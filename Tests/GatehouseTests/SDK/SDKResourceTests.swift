import Foundation
import GatehouseClient
import GatehouseProtocol
import Testing

/// `ResourceRequest` against the server's ResourceAdapter: invariants 3, 8 and 11 of reference §4.6, and the
/// retry rules of §4.4.
@Suite(.timeLimit(.minutes(3))) struct SDKResourceTests {
    /// Reference §3.8 end to end: unknown scope, RegisteredClient, insufficient_scope, one challenge, balance.
    @Test func aGETWithABodyIsRefusedBeforeAnyChallenge() async throws {
        try await TestServer.run { server in
            let transport = RecordingTransport()
            let client = SDK.client(server, transport: transport)
            let challenges = Calls<JSONObject>()
            try client.registerChallengeHandler(SDK.pinHandler(challenges))
            let error = await SDK.error {
                _ = try await ResourceRequest(client: client, path: SDK.balancePath, body: .json(["a": 1]), scope: "accessRestricted").send()
            }
            guard error?.code == .invalidArgument else { Issue.record("expected invalidArgument, got \(String(describing: error))"); return }
            #expect(challenges.count == 0, "the user was never asked")
            #expect(transport.requests(to: "/preauth/v1/preauthorize").isEmpty)
        }
    }

    @Test func theBalanceAfterOnePinChallenge() async throws {
        try await TestServer.run { server in
            let transport = RecordingTransport()
            let client = SDK.client(server, transport: transport)
            let challenges = Calls<JSONObject>()
            try client.registerChallengeHandler(SDK.pinHandler(challenges))
            let response = try await ResourceRequest(client: client, path: SDK.balancePath).send()
            #expect(response.status == 200)
            #expect(response.text == "19938.80")
            #expect(challenges.count == 1)
            let attempts = transport.requests(to: "/adapters/ResourceAdapter/balance")
            #expect(attempts.map { $0.header("Authorization") != nil } == [false, true, true])
            let tokens = transport.requests(to: "/az/v1/token").count
            #expect(tokens == 2, "a RegisteredClient token, then one for the learnt scope")

            let open = try await client.resourceRequest(path: "adapters/ResourceAdapter/unprotected").send()
            #expect(open.status == 200)
        }
    }

    /// Invariant 11: the learnt scope is cached per URL and method: the next call sends its token up front.
    @Test func theLearntScopeIsSentUpFrontNextTime() async throws {
        try await TestServer.run { server in
            let transport = RecordingTransport()
            let client = SDK.client(server, transport: transport)
            try client.registerChallengeHandler(SDK.pinHandler(Calls()))
            _ = try await client.resourceRequest(path: SDK.balancePath).send()
            transport.reset()
            let again = try await client.resourceRequest(path: SDK.balancePath).send()
            #expect(again.text == "19938.80")
            #expect(transport.count == 1, "one request, with the cached token of the cached scope")
            let token = try #require(await client.authorizationManager.cachedAccessToken(forScope: "accessRestricted"))
            #expect(transport.requests.first?.header("Authorization") == token.authorizationHeaderValue)

            // Another method on the same URL is another resource: its scope is not known yet.
            transport.reset()
            _ = try await client.resourceRequest(path: SDK.balancePath, method: .head).send()
            #expect(transport.requests.first?.header("Authorization") == nil)
        }
    }

    /// Invariant 3: 20 concurrent requests that need the same check ⇒ one `handleChallenge`, 20 balances.
    @Test func twentyConcurrentRequestsShareOneChallenge() async throws {
        try await TestServer.run { server in
            let client = SDK.client(server)
            let challenges = Calls<JSONObject>()
            try client.registerChallengeHandler(ClosureChallengeResponder(securityCheck: "PinCodeAttempts") { challenge in
                challenges.record(challenge)
                try? await Task.sleep(for: .milliseconds(300))  // a user takes a moment to type
                return .answer(["pin": "1234"])
            })
            let balances = try await SDK.bounded(60) {
                try await withThrowingTaskGroup(of: String.self) { group in
                    for _ in 0..<20 {
                        group.addTask { try await ResourceRequest(client: client, path: SDK.balancePath).send().text }
                    }
                    return try await group.reduce(into: [String]()) { $0.append($1) }
                }
            }
            #expect(balances == Array(repeating: "19938.80", count: 20))
            #expect(challenges.count == 1)
        }
    }

    /// Invariant 8: after a logout on the server, the token is refused (`invalid_token`); the SDK drops it,
    /// obtains a new one — through a challenge — and the request succeeds.
    @Test func afterAServerSideLogoutTheTokenIsRefusedAndObtainedAgain() async throws {
        try await TestServer.run { server in
            let store = InMemoryKeyStore()
            let transport = RecordingTransport()
            let client = SDK.client(server, keyStore: store, transport: transport)
            let challenges = Calls<JSONObject>()
            try client.registerChallengeHandler(SDK.pinHandler(challenges))
            #expect(try await client.resourceRequest(path: SDK.balancePath).send().status == 200)
            let stale = try #require(await client.authorizationManager.cachedAccessToken(forScope: "accessRestricted"))

            // The logout happens on the server, behind the SDK's back (another part of the app, an admin, ...).
            let stored = try #require(store.current)
            let logout = try await Self.logout(server, stored, check: "PinCodeAttempts")
            #expect(logout.status == 200)

            transport.reset()
            let response = try await client.resourceRequest(path: SDK.balancePath).send()
            #expect(response.text == "19938.80")
            #expect(challenges.count == 2, "the PIN is asked again")
            let attempts = transport.requests(to: "/adapters/ResourceAdapter/balance")
            #expect(attempts.count == 2)
            #expect(attempts.first?.header("Authorization") == stale.authorizationHeaderValue)
            #expect(await client.authorizationManager.cachedAccessToken(forScope: "accessRestricted") != stale)
        }
    }

    /// Invariant 8 through the SDK's own `logout`: every token is forgotten, the next call is challenged.
    @Test func theSDKsLogoutForgetsEveryToken() async throws {
        try await TestServer.run { server in
            let transport = RecordingTransport()
            let client = SDK.client(server, transport: transport)
            let challenges = Calls<JSONObject>()
            try client.registerChallengeHandler(SDK.pinHandler(challenges))
            _ = try await client.resourceRequest(path: SDK.balancePath).send()
            let registered = try await client.obtainAccessToken()
            try await client.logout(securityCheck: "PinCodeAttempts")
            let logout = try #require(transport.requests(to: "/preauth/v1/logout").first)
            #expect(logout.bodyForm["security_check"] == "PinCodeAttempts")
            let claims = try #require(logout.bodyForm["client_assertion"].flatMap(SDK.payload(ofJWS:)))
            #expect(claims["aud"] == .null || claims["aud"] == nil)
            #expect(claims["jti"] == .null || claims["jti"] == nil)
            #expect(await client.authorizationManager.cachedAccessToken(forScope: "accessRestricted") == nil)
            #expect(await client.authorizationManager.cachedAccessToken() == nil, "tokens of every scope are forgotten")
            #expect(try await client.obtainAccessToken() != registered)

            #expect(try await client.resourceRequest(path: SDK.balancePath).send().text == "19938.80")
            #expect(challenges.count == 2)
            try await client.authorizationManager.heartbeat()
            #expect(transport.requests(to: "/preauth/v1/heartbeat").count == 1)

            // Logging out a client that never registered is a no-op, not an error.
            let fresh = SDK.client(server)
            try await fresh.logout(securityCheck: "PinCodeAttempts")
        }
    }

    /// Reference §4.4: at most 5 authorization retries, then a clear error.
    @Test func aResourceThatKeepsRefusingEndsAfterFiveRetries() async throws {
        try await TestServer.run { server in
            let transport = RecordingTransport(intercept: { request in
                guard request.url.path.hasSuffix("/adapters/ResourceAdapter/balance") else { return nil }
                return TransportResponse(status: 403, headers: [
                    "WWW-Authenticate": #"Bearer error="insufficient_scope", scope="RegisteredClient accessRestricted""#,
                ], body: Data())
            })
            let client = SDK.client(server, transport: transport)
            try client.registerChallengeHandler(SDK.pinHandler(Calls()))
            let error = try await SDK.bounded(60) { await SDK.error { _ = try await client.resourceRequest(path: SDK.balancePath).send() } }
            guard let error, error.code == .authorizationFailed, let message = error.message else {
                Issue.record("expected authorizationFailed, got \(String(describing: error))")
                return
            }
            #expect(message.contains("Cannot retrieve a valid authorization header"))
            #expect(transport.requests(to: "/adapters/ResourceAdapter/balance").count == 6)
        }
    }

    /// Reference §4.4: `409 MFP-Conflict` is sent again, at most 7 times.
    @Test func conflictsAreRetried() async throws {
        try await TestServer.run { server in
            let conflicts = Calls<Int>()
            let transport = RecordingTransport(intercept: { request in
                guard request.url.path.hasSuffix("/adapters/ResourceAdapter/unprotected"), conflicts.count < 3 else { return nil }
                conflicts.record(1)
                return TransportResponse(status: 409, headers: ["MFP-Conflict": "Concurrency failure"], body: Data())
            })
            let client = SDK.client(server, transport: transport)
            let response = try await client.resourceRequest(path: "adapters/ResourceAdapter/unprotected").send()
            #expect(response.status == 200)
            #expect(transport.count == 4)

            let always = RecordingTransport(intercept: { request in
                TransportResponse(status: 409, headers: ["MFP-Conflict": "Concurrency failure"], body: Data())
            })
            let stuck = SDK.client(server, transport: always)
            let error = await SDK.error { _ = try await stuck.resourceRequest(path: "adapters/ResourceAdapter/unprotected").send() }
            #expect(error == .conflict)
            #expect(always.count == 8)
        }
    }

    @Test func queryHeadersAndBodiesReachTheServer() async throws {
        try await TestServer.run { server in
            let transport = RecordingTransport()
            let client = SDK.client(server, transport: transport)
            var request = ResourceRequest(client: client, path: "adapters/ResourceAdapter/unprotected", headers: ["X-Demo": "1"],
                                          queryParameters: [("q", "a b&c")])
            request.timeout = .seconds(5)
            _ = try await request.send()
            request.method = .post
            _ = try await request.send(json: ["amount": 10])
            _ = try await request.send(form: ["pin": "12%34"])
            #expect(transport.requests.map(\.method) == ["GET", "POST", "POST"])
            let sent = transport.requests
            #expect(sent.count == 3)
            #expect(sent.allSatisfy { $0.url.query == "q=a%20b%26c" && $0.header("X-Demo") == "1" })
            #expect(sent[1].bodyJSON == ["amount": 10])
            #expect(sent[1].header("Content-Type")?.hasPrefix("application/json") == true)
            #expect(sent[2].bodyForm == ["pin": "12%34"])

            request.method = .get
            let error = await SDK.error { _ = try await request.send(json: [:]) }
            #expect(error == .invalidArgument("a GET request cannot have a body"))
        }
    }

    /// `POST preauth/v1/logout` signed with a stored registration's key, outside the SDK.
    static func logout(_ server: TestServer, _ stored: StoredRegistration, check: String) async throws -> TestResponse {
        let key = try ClientKeyPair(pem: try #require(stored.privateKeyPEM))
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let claims = ClientAssertionClaims(iss: "\(SDK.pinApp)$ios$1.0", sub: stored.clientID, aud: nil, iat: now, exp: now + 60_000, jti: nil)
        let assertion = try JWS.sign(claims, with: key, kid: stored.clientID).compact
        return try await HTTP.postForm(server.baseURL + "/mfp/api/preauth/v1/logout", [
            ("security_check", check), ("client_assertion_type", ClientAssertionClaims.assertionType), ("client_assertion", assertion),
        ])
    }
}
