import Foundation
import GatehouseProtocol
import Testing

/// UserLogin: a user-authenticating check over stored users, with remember-me and logout.
@Suite(.timeLimit(.minutes(3))) struct UserLoginTests {
    @Test func loginRememberMeAndLogout() async throws {
        try await TestServer.run { server in
            var client = try ProtocolClient(server)
            try await client.register()
            let challenge = try await client.preauthorize(scope: "UserLogin")
            #expect(challenge.status == 401)
            #expect(challenge.json?["challenges"]?["UserLogin"] == ["errorMsg": nil, "remainingAttempts": 3])

            let wrong = try await client.preauthorize(scope: "UserLogin", answers: ["UserLogin": ["username": "john", "password": "nope"]])
            #expect(wrong.json?["challenges"]?["UserLogin"] == ["errorMsg": "Wrong username or password.", "remainingAttempts": 2])
            let nobody = try await client.preauthorize(scope: "UserLogin", answers: ["UserLogin": ["username": "nobody", "password": "demo"]])
            #expect(nobody.json?["challenges"]?["UserLogin"]?["remainingAttempts"] == 1)

            let right = try await client.preauthorize(
                scope: "UserLogin", answers: ["UserLogin": ["username": "john", "password": "demo", "rememberMe": true]])
            #expect(right.status == 200)
            let user = try #require(right.json?["successes"]?["UserLogin"]?["user"])
            #expect(user["id"] == "john")
            #expect(user["displayName"] == "John Doe")
            #expect(user["authenticatedBy"] == "UserLogin")
            #expect(user["attributes"] == ["country": "DE"])
            #expect(user["authenticatedAt"]?.intValue != nil)

            // The success lasts 1 s; remembered, the user comes back without a challenge.
            try await Task.sleep(for: .milliseconds(1200))
            let remembered = try await client.preauthorize(scope: "UserLogin")
            #expect(remembered.status == 200)
            #expect(remembered.json?["successes"]?["UserLogin"]?["user"]?["id"] == "john")

            // Logout forgets the user: the next round is a challenge.
            #expect(try await client.logout(securityCheck: "UserLogin").status == 200)
            let afterLogout = try await client.preauthorize(scope: "UserLogin")
            #expect(afterLogout.status == 401)
        }
    }

    @Test func withoutRememberMeTheUserIsChallengedAfterExpiry() async throws {
        try await TestServer.run { server in
            var client = try ProtocolClient(server)
            try await client.register()
            _ = try await client.preauthorize(scope: "UserLogin")
            let right = try await client.preauthorize(
                scope: "UserLogin", answers: ["UserLogin": ["username": "john", "password": "demo", "rememberMe": false]])
            #expect(right.status == 200)
            try await Task.sleep(for: .milliseconds(1200))
            #expect(try await client.preauthorize(scope: "UserLogin").status == 401)
        }
    }

    @Test func logoutFromThePinCheckAsksForThePinAgain() async throws {
        try await TestServer.run { server in
            let client = try await TokenTests.pinClient(server)
            #expect(try await client.preauthorize(scope: "accessRestricted").status == 200)
            #expect(try await client.logout(securityCheck: "PinCodeAttempts").status == 200)
            #expect(try await client.preauthorize(scope: "accessRestricted").status == 401)
            // Heartbeat: recorded, answered 200.
            let heartbeat = try await HTTP.postForm(client.api + "/preauth/v1/heartbeat", [
                ("client_assertion_type", ClientAssertionClaims.assertionType), ("client_assertion", try client.assertion(jti: nil, aud: nil)),
            ])
            #expect(heartbeat.status == 200)
        }
    }
}
