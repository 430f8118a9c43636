import Foundation
import GatehouseChecks
import GatehouseGateway
import Testing

/// The gateway's `users` login module locks an account after repeated wrong passwords (as the server's
/// `UserLogin` does): the right password is refused while locked, other users are unaffected.
@Suite(.timeLimit(.minutes(3))) struct GatewayLockoutTests {
    @Test func wrongPasswordsLockTheAccountNotTheOthers() async throws {
        try await GatewayFixture.run({ upstream in
            var configuration = GatewayConfiguration(
                realms: [GatewayFixture.usersRealm("demo", scheme: .basic)],
                services: [ServiceConfiguration(name: "api", path: "/api", upstream: upstream, realm: "demo", requireRoles: [])])
            configuration.accountLockout = AccountLockoutSettings(threshold: 3, windowSec: 60, durationSec: 4, maxDurationSec: 4)
            return configuration
        }) { fixture in
            func get(_ user: String, _ password: String) async throws -> Int {
                try await fixture.get("/api/x", headers: [("Authorization", basicAuthorization(user, password))]).status
            }
            #expect(try await get("joe", "welcome") == 200)   // remembered as verified from here on
            for attempt in 0..<3 { #expect(try await get("joe", "guess\(attempt)") == 401) }
            #expect(try await get("joe", "welcome") == 401)   // locked: even the right (cached) password
            #expect(try await get("ann", "secret") == 200)
            try await Task.sleep(for: .seconds(4.2))
            #expect(try await get("joe", "welcome") == 200)
        }
    }

    @Test func aWrongLockoutSettingIsAConfigurationError() throws {
        var configuration = GatewayConfiguration(realms: [GatewayFixture.usersRealm("demo", scheme: .basic)])
        configuration.accountLockout = AccountLockoutSettings(threshold: -1)
        #expect(throws: GatewayConfigurationError.self) { try Gateway(configuration: configuration) }
    }
}
