import Foundation
import GatehouseClient
import GatehouseProtocol
import Testing

/// Tokens, challenges and login against the real server: invariants 1, 2, 5, 6, 7, 9 and 10 of reference §4.6.
@Suite(.timeLimit(.minutes(3))) struct SDKTokenTests {
    /// Invariant 1: the second `obtainAccessToken` is served from the cache: no HTTP, no challenge.
    @Test func aSecondObtainIsServedFromTheCache() async throws {
        try await TestServer.run { server in
            let transport = RecordingTransport()
            let client = SDK.client(server, transport: transport)
            let challenges = Calls<JSONObject>()
            try client.registerChallengeHandler(SDK.pinHandler(challenges))
            let first = try await client.obtainAccessToken(forScope: "accessRestricted")
            #expect(challenges.all == [["errorMsg": nil, "remainingAttempts": 3]])
            #expect(first.scope == "RegisteredClient accessRestricted")
            #expect(first.authorizationHeaderValue == "Bearer \(first.value)")
            transport.reset()
            let second = try await client.obtainAccessToken(forScope: "accessRestricted")
            #expect(second == first)
            #expect(transport.count == 0, "a cached token costs no HTTP")
            #expect(challenges.count == 1)
        }
    }

    /// Invariant 2 (and a multi-check challenge): the cache ignores element order and `RegisteredClient`; both
    /// handlers answer one round, and the answers travel together.
    @Test func theCacheIgnoresScopeOrderAndMultiCheckAnswersTravelTogether() async throws {
        try await TestServer.run { server in
            let transport = RecordingTransport()
            let client = SDK.client(server, transport: transport)
            let pins = Calls<JSONObject>()
            let captchas = Calls<JSONObject>()
            try client.registerChallengeHandler(SDK.pinHandler(pins))
            try client.registerChallengeHandler(SDK.captchaHandler(captchas))
            let token = try await client.obtainAccessToken(forScope: "PinCodeAttempts SimpleCaptcha")
            #expect(token.scope == "PinCodeAttempts RegisteredClient SimpleCaptcha")
            #expect(pins.count == 1)
            #expect(captchas.count == 1)
            let rounds = transport.requests(to: "/preauth/v1/preauthorize")
            #expect(rounds.count == 2, "one challenge round, one answer round")
            let answers = try #require(rounds.last?.bodyJSON?["challengeResponse"]?.objectValue)
            #expect(Set(answers.keys) == ["PinCodeAttempts", "SimpleCaptcha"])

            transport.reset()
            for scope in ["SimpleCaptcha PinCodeAttempts", "RegisteredClient SimpleCaptcha  PinCodeAttempts", "PinCodeAttempts RegisteredClient SimpleCaptcha"] {
                #expect(try await client.obtainAccessToken(forScope: scope) == token)
            }
            #expect(transport.count == 0)
            #expect(try await client.obtainAccessToken(forScope: nil).scope == "RegisteredClient", "no scope means RegisteredClient")
        }
    }

    /// Invariants 5 and 6: wrong answers bring the challenge again with fewer attempts; the last one ends the
    /// request with the failure payload (`handleFailure` too); after the block, a fresh challenge.
    @Test func wrongAnswersCountDownThenFailThenAFreshChallengeAfterTheBlock() async throws {
        try await TestServer.run { server in
            let client = SDK.client(server)
            let challenges = Calls<JSONObject>()
            let failures = Calls<JSONObject>()
            try client.registerChallengeHandler(SDK.pinHandler(challenges, pin: "0000", failures: failures))
            let error = try await SDK.bounded(60) { await SDK.error { _ = try await client.obtainAccessToken(forScope: "accessRestricted") } }
            #expect(challenges.all.map { $0["remainingAttempts"]?.intValue } == [3, 2, 1])
            #expect(challenges.all.map { $0["errorMsg"]?.stringValue } == [nil, "The pin code is not valid.", "The pin code is not valid."])
            #expect(failures.all == [["failure": "Account blocked"]])
            #expect(error == .securityCheckFailed(failures: ["PinCodeAttempts": ["failure": "Account blocked"]]))

            // While blocked: the failure again, without a challenge.
            let blocked = await SDK.error { _ = try await client.obtainAccessToken(forScope: "accessRestricted") }
            #expect(blocked == .securityCheckFailed(failures: ["PinCodeAttempts": ["failure": "Account blocked"]]))
            #expect(challenges.count == 3)

            // After the 2-second block: a fresh challenge with all attempts.
            try await Task.sleep(for: .milliseconds(2300))
            _ = await SDK.error { _ = try await client.obtainAccessToken(forScope: "accessRestricted") }
            #expect(challenges.all.dropFirst(3).first == ["errorMsg": nil, "remainingAttempts": 3])
        }
    }

    /// Invariant 7: after `login`, a token for the check needs no challenge (and `login` obtains no token).
    @Test func loginThenObtainNeedsNoChallenge() async throws {
        try await TestServer.run { server in
            let transport = RecordingTransport()
            let client = SDK.client(server, transport: transport)
            let challenges = Calls<JSONObject>()
            let successes = Calls<JSONObject>()
            try client.registerChallengeHandler(ClosureChallengeResponder(securityCheck: "PinCodeAttempts", onSuccess: { successes.record($0) }) {
                challenges.record($0)
                return .cancel
            })
            try await client.login(securityCheck: "PinCodeAttempts", credentials: ["pin": "1234"])
            #expect(transport.requests(to: "/az/v1/token").isEmpty, "login obtains no token")
            #expect(successes.count == 1, "handleSuccess is called for a login too")
            let login = try #require(transport.requests(to: "/preauth/v1/preauthorize").first?.bodyJSON)
            #expect(login["scope"] == "PinCodeAttempts")
            #expect(login["challengeResponse"] == ["PinCodeAttempts": ["pin": "1234"]])

            let token = try await client.obtainAccessToken(forScope: "accessRestricted")
            #expect(token.scope == "RegisteredClient accessRestricted")
            #expect(challenges.count == 0)
        }
    }

    /// Wrong credentials in `login` bring a challenge to the handler, as for any request.
    @Test func aLoginWithWrongCredentialsIsChallenged() async throws {
        try await TestServer.run { server in
            let client = SDK.client(server)
            let challenges = Calls<JSONObject>()
            try client.registerChallengeHandler(ClosureChallengeResponder(securityCheck: "UserLogin") { challenge in
                challenges.record(challenge)
                return .answer(["username": "john", "password": "demo"])
            })
            let success = try await client.login(securityCheck: "UserLogin", credentials: ["username": "john", "password": "wrong"])
            #expect(challenges.all == [["errorMsg": "Wrong username or password.", "remainingAttempts": 2]])
            #expect(success["user"]?["id"] == "john")
        }
    }

    /// Invariant 9: the token lives as long as the shortest success, within the application's maximum.
    @Test func theTokenLivesAsLongAsItsChecksSucceed() async throws {
        try await TestServer.run { server in
            let client = SDK.client(server)
            try client.registerChallengeHandler(SDK.pinHandler(Calls()))
            let pin = try await client.obtainAccessToken(forScope: "accessRestricted")
            let pinLifetime = pin.expiresAt.timeIntervalSinceNow
            #expect(pinLifetime > 55 && pinLifetime <= 60, "PinCodeAttempts succeeds for 60 s")
            let registered = try await client.obtainAccessToken()
            let registeredLifetime = registered.expiresAt.timeIntervalSinceNow
            #expect(registeredLifetime > 3500 && registeredLifetime <= 3600, "RegisteredClient alone: the default maximum")

            let short = SDK.client(server, app: "com.sample.short", platform: "android")
            try short.registerChallengeHandler(SDK.pinHandler(Calls()))
            let capped = try await short.obtainAccessToken(forScope: "accessRestricted").expiresAt.timeIntervalSinceNow
            #expect(capped > 25 && capped <= 30, "maxTokenExpiration 30 caps the 60 s success")
        }
    }

    /// Invariant 10: remember-me brings the user back without a challenge after the success expired.
    ///
    /// The success lasts 2 s here, not the standard policy's 1 s: the server computes `expires_in` in whole
    /// seconds from the check's remaining success, so a 1-second success can never yield a token.
    @Test func rememberMeSkipsTheChallengeAfterTheSuccessExpired() async throws {
        try await TestServer.run(policy: SDK.policy(userLoginSuccessSec: 2)) { server in
            let client = SDK.client(server)
            let challenges = Calls<JSONObject>()
            try client.registerChallengeHandler(ClosureChallengeResponder(securityCheck: "UserLogin") { challenge in
                challenges.record(challenge)
                return .cancel
            })
            let success = try await client.login(securityCheck: "UserLogin", credentials: ["username": "john", "password": "demo", "rememberMe": true])
            #expect(success["user"]?["displayName"] == "John Doe")
            try await Task.sleep(for: .milliseconds(2200))  // the success lasts 2 s
            let token = try await client.obtainAccessToken(forScope: "UserLogin")
            #expect(token.scope == "RegisteredClient UserLogin")
            #expect(challenges.count == 0)

            // Without remember-me, the expired success means a challenge.
            let forgetful = SDK.client(server)
            let asked = Calls<JSONObject>()
            try forgetful.registerChallengeHandler(ClosureChallengeResponder(securityCheck: "UserLogin") { challenge in
                asked.record(challenge)
                return .cancel
            })
            try await forgetful.login(securityCheck: "UserLogin", credentials: ["username": "john", "password": "demo", "rememberMe": false])
            try await Task.sleep(for: .milliseconds(2200))
            let error = await SDK.error { _ = try await forgetful.obtainAccessToken(forScope: "UserLogin") }
            #expect(error == .challengeCancelled(securityCheck: "UserLogin"))
            #expect(asked.count == 1)
        }
    }

    @Test func aChallengeWithoutHandlerFailsClearly() async throws {
        try await TestServer.run { server in
            let client = SDK.client(server)
            let error = await SDK.error { _ = try await client.obtainAccessToken(forScope: "accessRestricted") }
            #expect(error == .missingChallengeHandler(securityCheck: "PinCodeAttempts"))
            try client.registerChallengeHandler(SDK.pinHandler(Calls()))
            #expect(throws: GatehouseClientError.duplicateChallengeHandler(securityCheck: "PinCodeAttempts")) {
                try client.registerChallengeHandler(SDK.pinHandler(Calls()))
            }
        }
    }
}
