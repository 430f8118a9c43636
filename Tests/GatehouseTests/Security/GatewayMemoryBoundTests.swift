@testable import GatehouseGateway
import Foundation
import Testing

/// Hostile input round 2, finding 6: every failed Basic login, made-up names included, was kept in the gateway's
/// memory of unsettled accounts: 1,600 failures with distinct 8 KB names added 14 MB.
@Suite(.timeLimit(.minutes(3))) struct GatewayMemoryBoundTests {
    @Test func madeUpNamesLeaveNothingInMemory() async throws {
        try await GatewayFixture.run({ upstream in
            GatewayConfiguration(realms: [GatewayFixture.usersRealm("demo", scheme: .basic)],
                                 services: [ServiceConfiguration(name: "echo", path: "/echo", upstream: upstream + "/echo", realm: "demo")])
        }) { fixture in
            for index in 0..<20 {
                let name = "made-up-\(index)-" + String(repeating: "x", count: 4096)
                let answer = try await fixture.get("/echo/x", headers: [("Authorization", basicAuthorization(name, "guess"))])
                #expect(answer.status == 401)
            }
            #expect(UnsettledAccounts.shared.count(naming: "made-up-") == 0)
            // A known user's failure is still remembered (it may start a lockout).
            #expect(try await fixture.get("/echo/x", headers: [("Authorization", basicAuthorization("joe", "nope"))]).status == 401)
            #expect(UnsettledAccounts.shared.count(naming: "user:joe") >= 1)
        }
    }
}
