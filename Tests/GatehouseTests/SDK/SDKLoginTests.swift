import Foundation
import GatehouseClient
import GatehouseProtocol
import Testing

/// A seed-style login handler that logs in with `login()` instead of `submitChallengeAnswer` — the confusion of
/// pain point 3 of reference §5, which must neither deadlock nor fail with "already in process".
final class LoginFromHandler: SecurityCheckChallengeHandler, @unchecked Sendable {
    let client: GatehouseClient
    let outcomes = Calls<String>()

    init(client: GatehouseClient) {
        self.client = client
        super.init(securityCheck: "UserLogin")
    }

    override func handleChallenge(_ challenge: JSONObject) {
        let client = self.client
        let outcomes = self.outcomes
        Task {
            do {
                let success = try await client.login(securityCheck: "UserLogin", credentials: ["username": "john", "password": "demo"])
                outcomes.record(success["user"]?["id"]?.stringValue ?? "?")
            } catch {
                outcomes.record("\(error)")
            }
        }
    }
}

/// `login`, `logout` and `obtainAccessToken` called concurrently are served in turn.
@Suite(.timeLimit(.minutes(3))) struct SDKLoginTests {
    @Test func concurrentLoginsAndObtainsAreSerialisedNotRefused() async throws {
        try await TestServer.run { server in
            let client = SDK.client(server)
            try client.registerChallengeHandler(SDK.pinHandler(Calls()))
            try client.registerChallengeHandler(SDK.captchaHandler(Calls()))
            let results = try await SDK.bounded(60) {
                try await withThrowingTaskGroup(of: String.self) { group in
                    for index in 0..<12 {
                        group.addTask {
                            switch index % 4 {
                            case 0: return try await client.login(securityCheck: "PinCodeAttempts", credentials: ["pin": "1234"]).isEmpty ? "pin" : "pin"
                            case 1: return try await client.obtainAccessToken(forScope: "accessRestricted").scope
                            case 2: return try await client.obtainAccessToken(forScope: "SimpleCaptcha").scope
                            default: return try await client.login(securityCheck: "UserLogin", credentials: ["username": "john", "password": "demo"])["user"]?["id"]?.stringValue ?? "?"
                            }
                        }
                    }
                    return try await group.reduce(into: [String]()) { $0.append($1) }
                }
            }
            #expect(results.sorted() == (Array(repeating: "RegisteredClient SimpleCaptcha", count: 3) + Array(repeating: "RegisteredClient accessRestricted", count: 3)
                + Array(repeating: "john", count: 3) + Array(repeating: "pin", count: 3)).sorted())
        }
    }

    @Test func loginFromTheHandlerAnswersTheOpenChallenge() async throws {
        try await TestServer.run(policy: SDK.policy(userLoginSuccessSec: 30)) { server in
            // Were `login` to wait for the flow that waits for the handler, the flow would end at the challenge timeout
            // with challengeTimedOut instead of a token.
            let client = SDK.client(server, challengeTimeout: .seconds(60))
            let handler = LoginFromHandler(client: client)
            try client.registerChallengeHandler(handler)
            let token = try await SDK.bounded(60) { try await client.obtainAccessToken(forScope: "UserLogin") }
            #expect(token.scope == "RegisteredClient UserLogin")
            try await Task.sleep(for: .milliseconds(100))
            #expect(handler.outcomes.all == ["john"])
        }
    }
}
