import Foundation
import GatehouseProtocol
import Testing

/// Hostile input round 3, finding 7 (issue 54): step-up's `max_age` was met without the second factor. After
/// `max_age` the SDK logs out of the login and logs in again; that round, with the password only, gave a token with
/// the second factor's `acr` and an `auth_time` 0 s old — TOTP's success (3,600 s by default) was kept when the same
/// user logged in again. A second factor's success now holds for the login it was made on only.
@Suite(.timeLimit(.minutes(3))) struct StepUpFreshLoginTests {
    static let login: [String: JSON] = ["UserLogin": ["username": "john", "password": "demo"]]

    @Test func aNewLoginAsksTheSecondFactorAgainAndKeepsItsUsedAttempts() async throws {
        try await TestServer.run(policy: StepUpTests.policy) { server in
            let (client, challenge) = try await TOTPTests.loggedIn(server)
            let enrolment = try #require(challenge["enrolment"])
            #expect(try await client.preauthorize(scope: "balance transfers", answers: ["TOTP": ["code": .string(try TOTPTests.code(enrolment))]]).status == 200)
            let strong = try await client.obtainToken(scope: "balance transfers").access_token
            #expect(SDK.payload(ofJWS: strong)?["acr"]?.stringValue == StepUpTests.mfa)

            // max_age demands a fresh authentication: the login is logged out of and answered again, password only.
            try await Task.sleep(for: .milliseconds(20))
            #expect(try await client.logout(securityCheck: "UserLogin").status < 300)
            #expect(try await client.preauthorize(scope: "balance", answers: Self.login).status == 200)
            // The second factor is asked again: no MFA token from the password alone.
            let asked = try await client.preauthorize(scope: "balance transfers")
            #expect(asked.status == 401 && asked.json?["challenges"]?["TOTP"] != nil, "\(String(decoding: asked.body, as: UTF8.self))")
            #expect(try await client.authorize(scope: "balance transfers").status != 302)
            let weak = try await client.obtainToken(scope: "balance").access_token
            #expect(SDK.payload(ofJWS: weak)?["acr"]?.stringValue == StepUpTests.password)

            // A wrong code, then logging in again: the attempt used stays (a new login buys no fresh attempts).
            let wrong = try await client.preauthorize(scope: "balance transfers", answers: ["TOTP": ["code": "000000"]])
            #expect(wrong.json?["challenges"]?["TOTP"]?["remainingAttempts"] == 2, "\(String(decoding: wrong.body, as: UTF8.self))")
            #expect(try await client.logout(securityCheck: "UserLogin").status < 300)
            #expect(try await client.preauthorize(scope: "balance", answers: Self.login).status == 200)
            let still = try await client.preauthorize(scope: "balance transfers")
            #expect(still.json?["challenges"]?["TOTP"]?["remainingAttempts"] == 2, "\(String(decoding: still.body, as: UTF8.self))")

            // The second factor answered on this login: MFA again, with this login's auth_time.
            let next = try TOTPTests.code(enrolment, offset: 30_000)
            #expect(try await client.preauthorize(scope: "balance transfers", answers: ["TOTP": ["code": .string(next)]]).status == 200)
            let stepped = try await client.obtainToken(scope: "balance transfers").access_token
            #expect(SDK.payload(ofJWS: stepped)?["acr"]?.stringValue == StepUpTests.mfa)
            // Its auth_time is this (the latest) login's.
            let authTime = try #require(SDK.payload(ofJWS: stepped)?["auth_time"]?.intValue)
            #expect(authTime >= (SDK.payload(ofJWS: weak)?["auth_time"]?.intValue ?? .max) && abs(Int64(authTime) - Int64(Date().timeIntervalSince1970)) <= 5)
        }
    }
}
