import Foundation
import GatehouseClient
import Testing

/// A challenge handler's hooks may use the client themselves (issue 36): `handleSuccess`, `handleFailure` and
/// `challengeAbandoned` run after the flow's turn has ended, so a hook that obtains a token waits for nothing that
/// waits for it — where it used to hang every flow of the client. Each call is bounded: a hang fails in seconds.
@Suite(.timeLimit(.minutes(3))) struct SDKHookReentrancyTests {
    /// A client whose captcha is solved, with `pin` answering PinCodeAttempts and the hooks given.
    static func client(_ server: TestServer, pin: String, abandonAfter: Duration = .seconds(30),
                       onSuccess: @escaping @Sendable (GatehouseClient) async -> Void = { _ in },
                       onFailure: @escaping @Sendable (GatehouseClient) async -> Void = { _ in },
                       onAbandoned: @escaping @Sendable (GatehouseClient) async -> Void = { _ in },
                       answer: Bool = true) throws -> GatehouseClient {
        let client = SDK.client(server, challengeTimeout: abandonAfter)
        try client.registerChallengeHandler(SDK.captchaHandler(Calls<JSONObject>()))
        try client.registerChallengeHandler(ClosureChallengeResponder(
            securityCheck: "PinCodeAttempts", onSuccess: { _ in await onSuccess(client) }, onFailure: { _ in await onFailure(client) },
            onAbandoned: { _ in await onAbandoned(client) }
        ) { _ in
            if !answer { try? await Task.sleep(for: .seconds(60)) }
            return .answer(["pin": .string(pin)])
        })
        return client
    }

    @Test func handleSuccessMayObtainAnotherToken() async throws {
        try await TestServer.run { server in
            let inner = Calls<String>()
            let client = try Self.client(server, pin: "1234", onSuccess: { client in
                inner.record((try? await client.obtainAccessToken(forScope: "SimpleCaptcha"))?.scope ?? "none")
            })
            let token = try await SDK.bounded(20) { try await client.obtainAccessToken(forScope: "accessRestricted") }
            #expect(token.scope == "RegisteredClient accessRestricted")
            // The hook ran, and got its own token, before the outer call returned.
            #expect(inner.all == ["RegisteredClient SimpleCaptcha"])
        }
    }

    @Test func handleFailureMayObtainAnotherToken() async throws {
        try await TestServer.run { server in
            let inner = Calls<String>()
            let client = try Self.client(server, pin: "0000", onFailure: { client in
                inner.record((try? await client.obtainAccessToken(forScope: "SimpleCaptcha"))?.scope ?? "none")
            })
            let error = await SDK.error { _ = try await SDK.bounded(20) { try await client.obtainAccessToken(forScope: "accessRestricted") } }
            #expect(error?.code == .securityCheckFailed)
            #expect(inner.all == ["RegisteredClient SimpleCaptcha"])
        }
    }

    /// A flow queued behind one that waits on a challenge nobody answers gives up after the client's
    /// `flowWaitTimeout` with its own error, having sent nothing; the flow before it is not disturbed.
    @Test func aFlowWaitingTooLongForItsTurnFailsClearly() async throws {
        try await TestServer.run { server in
            let client = SDK.client(server, challengeTimeout: .seconds(30), flowWaitTimeout: .milliseconds(800))
            try client.registerChallengeHandler(SDK.captchaHandler(Calls<JSONObject>()))
            let asked = Calls<String>()
            try client.registerChallengeHandler(ClosureChallengeResponder(securityCheck: "PinCodeAttempts") { _ in
                asked.record("pin")
                try? await Task.sleep(for: .seconds(30))   // nobody answers
                return .cancel
            })
            let stuck = Task { try await client.obtainAccessToken(forScope: "accessRestricted") }
            defer { stuck.cancel() }
            for _ in 0..<200 where asked.all.isEmpty { try await Task.sleep(for: .milliseconds(50)) }
            #expect(asked.all == ["pin"], "the first flow is waiting on its PIN challenge")
            let start = ContinuousClock.now
            let error = await SDK.error { _ = try await SDK.bounded(20) { try await client.login(securityCheck: "UserLogin", credentials: [:]) } }
            #expect(error?.code == .flowWaitTimedOut, "\(String(describing: error))")
            #expect(ContinuousClock.now - start < .seconds(10))
            #expect(error?.description.contains("held the client longer than") == true)
            #expect(asked.all == ["pin"], "the first flow's challenge was not asked again")
        }
    }

    @Test func challengeAbandonedMayLogIn() async throws {
        try await TestServer.run(policy: SDK.policy(userLoginSuccessSec: 60)) { server in
            let inner = Calls<String>()
            let client = try Self.client(server, pin: "1234", abandonAfter: .milliseconds(500), onAbandoned: { client in
                let user = try? await client.login(securityCheck: "UserLogin", credentials: ["username": "john", "password": "demo"])
                inner.record(user?["user"]?["id"]?.stringValue ?? "none")
            }, answer: false)
            let error = await SDK.error { _ = try await SDK.bounded(20) { try await client.obtainAccessToken(forScope: "accessRestricted") } }
            #expect(error?.code == .challengeTimedOut)
            #expect(inner.all == ["john"])
        }
    }
}
