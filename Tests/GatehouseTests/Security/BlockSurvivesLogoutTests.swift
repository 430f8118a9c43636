import Foundation
import GatehouseProtocol
import Testing

/// Hostile input round 2, finding 1: a client's own request never moves a block or an attempt count back. Three
/// wrong PINs, then `POST preauth/v1/logout` for the check with the client's own assertion, reset the check to three
/// fresh attempts: a 4-digit PIN fell in under a minute.
@Suite(.timeLimit(.minutes(3))) struct BlockSurvivesLogoutTests {
    /// The standard policy with PinCodeAttempts blocked for 10 minutes (2 s there: a loaded machine outlived it).
    static let policy: String = {
        let standard = TestPolicies.standard
        let long = standard.replacingOccurrences(of: "maxAttempts: 3, blockedStateExpirationSec: 2,", with: "maxAttempts: 3, blockedStateExpirationSec: 600,")
        precondition(long != standard, "the standard test policy's PinCodeAttempts changed")
        return long
    }()

    static func wrongPIN(_ client: ProtocolClient) async throws -> Int {
        try await client.preauthorize(scope: "accessRestricted", answers: ["PinCodeAttempts": ["pin": "0000"]]).status
    }

    @Test func aBlockedClientStaysBlockedAfterLoggingOut() async throws {
        try await TestServer.run(policy: Self.policy) { server in
            var client = try ProtocolClient(server, app: "com.sample.pincodeswift", platform: "ios")
            try await client.register()
            #expect(try await client.preauthorize(scope: "accessRestricted").status == 401)
            #expect(try await Self.wrongPIN(client) == 401)
            #expect(try await Self.wrongPIN(client) == 401)
            #expect(try await Self.wrongPIN(client) == 403)  // blocked
            #expect(try await client.logout(securityCheck: "PinCodeAttempts").status == 200)
            // Still blocked: no fresh challenge, the right PIN is not even looked at.
            let after = try await client.preauthorize(scope: "accessRestricted", answers: ["PinCodeAttempts": ["pin": "1234"]])
            #expect(after.status == 403)
            #expect(String(decoding: after.body, as: UTF8.self).contains("Account blocked"))
        }
    }

    @Test func attemptsUsedStayUsedAfterLoggingOut() async throws {
        try await TestServer.run(policy: Self.policy) { server in
            var client = try ProtocolClient(server, app: "com.sample.pincodeswift", platform: "ios")
            try await client.register()
            #expect(try await Self.wrongPIN(client) == 401)
            #expect(try await Self.wrongPIN(client) == 401)
            #expect(try await client.logout(securityCheck: "PinCodeAttempts").status == 200)
            #expect(try await Self.wrongPIN(client) == 403)  // the third attempt, not the first of three new ones
        }
    }

    @Test func aSuccessStillEndsWithALogout() async throws {
        try await TestServer.run(policy: Self.policy) { server in
            var client = try ProtocolClient(server, app: "com.sample.pincodeswift", platform: "ios")
            try await client.register()
            #expect(try await client.preauthorize(scope: "accessRestricted", answers: ["PinCodeAttempts": ["pin": "1234"]]).status == 200)
            #expect(try await client.preauthorize(scope: "accessRestricted").status == 200)
            #expect(try await client.logout(securityCheck: "PinCodeAttempts").status == 200)
            #expect(try await client.preauthorize(scope: "accessRestricted").status == 401)  // challenged again
        }
    }
}
